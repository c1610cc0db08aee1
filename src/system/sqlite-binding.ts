import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { AgentError } from '../errors.js';

/**
 * Which better-sqlite3 binary this node loads. A checkout (or any npm install) has the one npm
 * built, `build/Release/better_sqlite3.node`, and better-sqlite3 finds it itself. The Debian package
 * carries one per supported Node major instead, `build/node<major>-abi<abi>/better_sqlite3.node`,
 * so one package serves Debian's nodejs 20 and NodeSource's 22, 24 and 26; this picks the one of
 * the running node's ABI, for `new Database(file, { nativeBinding })`.
 */

/** One binary the package carries. */
export interface CarriedBinding {
  major: number;
  abi: number;
  file: string;
}

const CARRIED = /^node(\d+)-abi(\d+)$/;

/** The binaries carried under `moduleDir/build`, by Node major; empty in a checkout. */
export function carriedBindings(moduleDir: string): CarriedBinding[] {
  const build = path.join(moduleDir, 'build');
  if (existsSync(path.join(build, 'Release', 'better_sqlite3.node'))) return [];
  let entries: string[];
  try {
    entries = readdirSync(build);
  } catch {
    return [];
  }
  return entries
    .flatMap((name) => {
      const m = CARRIED.exec(name);
      const file = path.join(build, name, 'better_sqlite3.node');
      return m && existsSync(file) ? [{ major: Number(m[1]), abi: Number(m[2]), file }] : [];
    })
    .sort((a, b) => a.major - b.major);
}

/**
 * The binary for a node of `abi` among those carried: undefined when none are (better-sqlite3's
 * own build is used), an AgentError naming the node and the set when this ABI is not among them.
 */
export function chooseSqliteBinding(
  carried: readonly CarriedBinding[],
  node: { abi: string; version: string; execPath: string },
): string | undefined {
  if (carried.length === 0) return undefined;
  const match = carried.find((c) => String(c.abi) === node.abi);
  if (match) return match.file;
  throw new AgentError('NATIVE_MODULE_MISMATCH', unsupportedNodeSentence(carried, node), { class: 'config' });
}

/** "telematics-agent runs on Node 20, 22 or 24 (ABI 115, 127, 137); /usr/bin/node is v18.19.0 (ABI 108)". */
export function unsupportedNodeSentence(
  carried: readonly CarriedBinding[],
  node: { abi: string; version: string; execPath: string },
): string {
  const majors = carried.map((c) => String(c.major));
  const list = majors.length > 1 ? `${majors.slice(0, -1).join(', ')} or ${majors.at(-1)}` : (majors[0] ?? '');
  return `telematics-agent runs on Node ${list} (ABI ${carried.map((c) => c.abi).join(', ')}); ${node.execPath} is ${node.version} (ABI ${node.abi})`;
}

let chosen: { file: string | undefined } | undefined;

/** The binary for this process's node (chosen once), or undefined for better-sqlite3's own build. */
export function sqliteBinding(): string | undefined {
  if (!chosen) {
    const moduleDir = path.dirname(createRequire(import.meta.url).resolve('better-sqlite3/package.json'));
    const node = { abi: process.versions.modules, version: process.version, execPath: process.execPath };
    chosen = { file: chooseSqliteBinding(carriedBindings(moduleDir), node) };
  }
  return chosen.file;
}
