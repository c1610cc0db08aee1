#!/usr/bin/env node
// Used by scripts/provision.sh: loads every native module the package allows to run install
// scripts (package.json "allowScripts") from an installed application directory, the way the
// daemon will, and prints the name of each one that does not load on stdout (details on stderr).
// Loading, not looking for files, is the test: a binary built for another Node ABI or another
// CPU is present but useless.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const appDir = path.resolve(process.argv[2] ?? '.');
const pkgFile = path.join(appDir, 'package.json');
const pkg = JSON.parse(readFileSync(pkgFile, 'utf8'));
const require = createRequire(pkgFile);

// better-sqlite3 loads its binding on first use, not on import: open a database to prove it.
const probes = {
  'better-sqlite3': (mod) => new mod(':memory:').prepare('select 1 as one').get(),
};

for (const [name, allowed] of Object.entries(pkg.allowScripts ?? {})) {
  if (allowed !== true) continue;
  try {
    const mod = require(name);
    probes[name]?.(mod);
    process.stderr.write(`native module ${name}: loads\n`);
  } catch (e) {
    process.stderr.write(`native module ${name}: does not load (${String(e.message).split('\n')[0]})\n`);
    process.stdout.write(`${name}\n`);
  }
}
