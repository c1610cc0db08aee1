import { createRequire } from 'node:module';
import { AgentError, isAgentError } from '../errors.js';
import { sqliteBinding } from './sqlite-binding.js';

/**
 * Loads better-sqlite3's native binding before anything depends on it, so that a binding built for
 * another Node (a NodeSource node in place of Debian's, a package of another architecture) ends the
 * daemon with one sentence saying what to do instead of a NODE_MODULE_VERSION stack trace.
 */
export function assertNativeModules(load: () => void = openMemoryDatabase): void {
  try {
    load();
  } catch (e) {
    // The package's own sentence: this node is not among those it carries a binary for.
    if (isAgentError(e) && e.code === 'NATIVE_MODULE_MISMATCH') throw e;
    throw new AgentError('NATIVE_MODULE_MISMATCH', nativeMismatchMessage(e), { class: 'config', cause: e });
  }
}

function openMemoryDatabase(): void {
  // The binding is dlopen'ed on the first database, not on import.
  const Database = createRequire(import.meta.url)('better-sqlite3') as new (
    file: string,
    options: { nativeBinding?: string | undefined },
  ) => { close(): void };
  new Database(':memory:', { nativeBinding: sqliteBinding() }).close();
}

/** The sentence for a binding that did not load; exported for its test. */
export function nativeMismatchMessage(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  const node = `node ${process.version} (${process.execPath}, ABI ${process.versions.modules})`;
  const abi = /NODE_MODULE_VERSION (\d+)\.\s+This version of Node\.js requires\s+NODE_MODULE_VERSION (\d+)/.exec(text);
  const fix =
    'run the agent with the Node.js its native modules were built for (the Debian package: /usr/bin/node, a major it carries), ' +
    'or rebuild the native modules for this node (in a checkout: npm rebuild better-sqlite3)';
  if (abi) return `better-sqlite3 was built for Node ABI ${abi[1]}, but this is ${node}: ${fix}`;
  if (/wrong ELF class|cannot open shared object|invalid ELF header|Exec format error/i.test(text)) {
    return `better-sqlite3's native module is for another architecture than this ${process.arch} ${node}: install the package of this gateway's architecture (dpkg --print-architecture)`;
  }
  return `better-sqlite3's native module does not load in ${node} (${text.split('\n')[0]}): ${fix}`;
}
