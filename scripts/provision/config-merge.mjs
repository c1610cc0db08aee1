#!/usr/bin/env node
// Used by scripts/provision.sh: applies the settings given as flags to an existing configuration
// (or to an empty one) and prints the result on stdout. Only the named keys change; every other
// key, including ones this script does not know, stays as it was, so a technician's hand edits
// survive a reprovisioning. The result is validated afterwards by `telematics-agent config check`.
//
// Usage: config-merge.mjs EXISTING_FILE|- OP... with OP one of
//   set:dotted.key=value     a string
//   num:dotted.key=value     a number
//   unset:dotted.key         removes the key
// Changed keys (never values: a key could one day hold a secret) are reported on stderr.
import { readFileSync } from 'node:fs';

const [input, ...ops] = process.argv.slice(2);
if (input === undefined) {
  process.stderr.write('usage: config-merge.mjs EXISTING_FILE|- OP...\n');
  process.exit(64);
}

let config = {};
if (input !== '-') {
  try {
    config = JSON.parse(readFileSync(input, 'utf8'));
  } catch (e) {
    process.stderr.write(`cannot read ${input} as JSON: ${e.message}\nfix or remove it, then run again\n`);
    process.exit(2);
  }
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    process.stderr.write(`${input} does not hold a JSON object; fix or remove it, then run again\n`);
    process.exit(2);
  }
}

const changed = [];
for (const op of ops) {
  const colon = op.indexOf(':');
  const kind = op.slice(0, colon);
  const rest = op.slice(colon + 1);
  const eq = rest.indexOf('=');
  const key = kind === 'unset' ? rest : rest.slice(0, eq);
  if (colon < 0 || key === '' || (kind !== 'unset' && eq < 0)) fail(`malformed operation "${op}"`);
  const parts = key.split('.');
  const leaf = parts.pop();
  let node = config;
  for (const part of parts) {
    if (node[part] === undefined && kind === 'unset') break;
    if (node[part] === undefined) node[part] = {};
    if (node[part] === null || typeof node[part] !== 'object' || Array.isArray(node[part]))
      fail(`cannot set ${key}: ${part} is not an object in the existing configuration`);
    node = node[part];
  }
  if (kind === 'unset') {
    if (node !== undefined && Object.hasOwn(node, leaf)) {
      delete node[leaf];
      changed.push(`removed ${key}`);
    }
    continue;
  }
  const raw = rest.slice(eq + 1);
  let value;
  if (kind === 'set') value = raw;
  else if (kind === 'num') {
    value = Number(raw);
    if (!Number.isFinite(value) || raw.trim() === '') fail(`${key} must be a number, got "${raw}"`);
  } else fail(`unknown operation "${kind}" in "${op}"`);
  if (node[leaf] !== value) {
    changed.push(`${node[leaf] === undefined ? 'set' : 'changed'} ${key}`);
    node[leaf] = value;
  }
}

for (const line of changed) process.stderr.write(`config: ${line}\n`);
process.stdout.write(`${JSON.stringify(config, null, 2)}\n`);

function fail(message) {
  process.stderr.write(`config-merge: ${message}\n`);
  process.exit(64);
}
