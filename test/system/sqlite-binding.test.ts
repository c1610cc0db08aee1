import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { isAgentError } from '../../src/errors.js';
import { carriedBindings, chooseSqliteBinding, sqliteBinding } from '../../src/system/sqlite-binding.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { tempDir } from '../helpers/tmp.js';

const CHECKOUT_BUILD = path.join(REPO_ROOT, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node');
const THIS_NODE = { abi: process.versions.modules, version: process.version, execPath: process.execPath };
const MAJOR = Number(process.versions.node.split('.')[0]);

/** A better-sqlite3 folder laid out as the package lays it out: build/node<major>-abi<abi>/. */
function packagedModule(carried: Array<[major: number, abi: number]>, source = CHECKOUT_BUILD): string {
  const dir = tempDir('ta-sqlite-binding-');
  for (const [major, abi] of carried) {
    mkdirSync(path.join(dir, 'build', `node${major}-abi${abi}`), { recursive: true });
    copyFileSync(source, path.join(dir, 'build', `node${major}-abi${abi}`, 'better_sqlite3.node'));
  }
  return dir;
}

describe("the better-sqlite3 binary for the running node's ABI", () => {
  it("in a checkout is better-sqlite3's own build: no nativeBinding", () => {
    expect(sqliteBinding()).toBeUndefined();
    const checkout = packagedModule([[22, 127]]);
    mkdirSync(path.join(checkout, 'build', 'Release'));
    copyFileSync(CHECKOUT_BUILD, path.join(checkout, 'build', 'Release', 'better_sqlite3.node'));
    expect(carriedBindings(checkout)).toEqual([]);
  });

  it('in the package is the one of this ABI, and it opens a database', () => {
    const dir = packagedModule([
      [26, 147],
      [MAJOR, Number(process.versions.modules)],
      [99, 999],
    ]);
    // A folder of another shape, or one without its binary, is not carried.
    mkdirSync(path.join(dir, 'build', 'node30-abi999'));
    writeFileSync(path.join(dir, 'build', 'README'), '');
    const carried = carriedBindings(dir);
    expect(carried.map((c) => c.major)).toEqual([MAJOR, 26, 99].sort((a, b) => a - b));
    const file = chooseSqliteBinding(carried, THIS_NODE);
    expect(file).toBe(path.join(dir, 'build', `node${MAJOR}-abi${process.versions.modules}`, 'better_sqlite3.node'));
    const db = new Database(':memory:', { nativeBinding: file });
    expect(db.prepare('select 6 * 7 as n').get()).toEqual({ n: 42 });
    db.close();
  });

  it('refuses a node it carries nothing for, in one sentence naming that node and the set', () => {
    const carried = carriedBindings(
      packagedModule([
        [24, 137],
        [20, 115],
        [26, 147],
        [22, 127],
      ]),
    );
    let caught: unknown;
    try {
      chooseSqliteBinding(carried, { abi: '108', version: 'v18.19.0', execPath: '/usr/bin/node' });
    } catch (e) {
      caught = e;
    }
    expect(isAgentError(caught) && caught.code).toBe('NATIVE_MODULE_MISMATCH');
    expect(isAgentError(caught) && caught.errorClass).toBe('config');
    expect((caught as Error).message).toBe(
      'telematics-agent runs on Node 20, 22, 24 or 26 (ABI 115, 127, 137, 147); /usr/bin/node is v18.19.0 (ABI 108)',
    );
  });

  it('carries nothing where better-sqlite3 has no build folder', () => {
    expect(carriedBindings(tempDir('ta-sqlite-binding-'))).toEqual([]);
    expect(chooseSqliteBinding([], THIS_NODE)).toBeUndefined();
  });
});
