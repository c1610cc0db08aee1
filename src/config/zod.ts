import { createRequire } from 'node:module';
import path from 'node:path';
import type { z } from 'zod';

/**
 * zod for the configuration schemas, loaded as CommonJS so that the daemon can let it go once its
 * configuration is read: an ES module is never unloaded, and zod is 95 modules and about 3 MB of
 * the daemon's heap (docs/decisions/daemon-memory.md). Typed from zod's own declarations.
 */
export type Zod = typeof z;

export function loadZod(): Zod {
  return (createRequire(import.meta.url)('zod') as { z: Zod }).z;
}

/** zod's folder in node_modules, with a trailing separator. */
function zodDir(): string {
  return path.dirname(createRequire(import.meta.url).resolve('zod')) + path.sep;
}

/** Whether any of zod's CommonJS modules is loaded. */
export function zodLoaded(): boolean {
  const dir = zodDir();
  return Object.keys(createRequire(import.meta.url).cache).some((id) => id.startsWith(dir));
}

/**
 * Forgets zod's CommonJS modules, so that its code is garbage once no schema built with it is
 * held. zod keeps its registry and settings on globalThis (copies share them); those would hold
 * its code too. A later loadZod() loads it afresh.
 */
export function unloadZod(): void {
  const dir = zodDir();
  const cache = createRequire(import.meta.url).cache;
  for (const id of Object.keys(cache)) if (id.startsWith(dir)) delete cache[id];
  const g = globalThis as { __zod_globalRegistry?: unknown; __zod_globalConfig?: unknown };
  delete g.__zod_globalRegistry;
  delete g.__zod_globalConfig;
}
