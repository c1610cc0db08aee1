import { configSchemas } from './schema.js';

/**
 * Walks the configuration schema by key. Used for "did you mean" hints on unknown keys and by the
 * test that checks the README's configuration tables against the schema.
 */

/** The object shape inside a schema node, unwrapping defaults, prefaults and optionals. */
function shapeOf(node: unknown): Record<string, unknown> | undefined {
  let n: unknown = node;
  for (let i = 0; i < 8 && n && !(n as { shape?: unknown }).shape; i++) {
    const inner = (n as { _zod?: { def?: { innerType?: unknown } } })._zod?.def?.innerType;
    if (!inner) break;
    n = inner;
  }
  return (n as { shape?: Record<string, unknown> } | undefined)?.shape;
}

/** The keys the schema allows at a dotted path (`[]` for the top level). */
export function knownKeys(keyPath: string[], schema: unknown = configSchemas().configSchema): string[] {
  let node: unknown = schema;
  for (const k of keyPath) {
    node = shapeOf(node)?.[k];
    if (!node) return [];
  }
  return Object.keys(shapeOf(node) ?? {});
}

/** Every leaf key of the schema, as a dotted path (records such as device.attributes are leaves). */
export function leafKeys(node: unknown = configSchemas().configSchema, prefix = ''): string[] {
  const shape = shapeOf(node);
  if (!shape) return [prefix];
  return Object.entries(shape).flatMap(([k, v]) => leafKeys(v, prefix ? `${prefix}.${k}` : k));
}

/**
 * Keys of an earlier version that this one accepts only so that an old file still starts: their
 * schema text begins "No longer read" or "Replaced by" (warnings.ts says what the agent does now).
 * `config check` leaves them out of the effective configuration and no hint offers them.
 */
export function retiredKeys(schema: unknown = configSchemas().configSchema): string[] {
  return leafKeys(schema).filter((k) => /^(No longer read|Replaced by)\b/.test(nodeAt(k.split('.'), schema)?.description ?? ''));
}

/** The retired keys whose value the agent ignores (not those read under a new name). */
export function ignoredKeys(schema: unknown = configSchemas().configSchema): string[] {
  return leafKeys(schema).filter((k) => /^No longer read\b/.test(nodeAt(k.split('.'), schema)?.description ?? ''));
}

function nodeAt(keyPath: string[], schema: unknown): { description?: string } | undefined {
  let node: unknown = schema;
  for (const k of keyPath) {
    node = shapeOf(node)?.[k];
    if (!node) return undefined;
  }
  return node as { description?: string };
}

/** The schema's default at a dotted path (`undefined` where there is none), for examples in messages. */
export function defaultAt(keyPath: string[], schema: unknown = configSchemas().configSchema): unknown {
  let node: unknown = schema;
  for (const k of keyPath) {
    node = shapeOf(node)?.[k];
    if (!node) return undefined;
  }
  for (let i = 0; i < 8 && node; i++) {
    const def = (node as { _zod?: { def?: { type?: string; defaultValue?: unknown; innerType?: unknown } } })._zod?.def;
    if (def?.type === 'default') return def.defaultValue;
    node = def?.innerType;
  }
  return undefined;
}
