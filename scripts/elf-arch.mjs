#!/usr/bin/env node
// Used by scripts/package-deb.sh: lists every ELF file under DIR with its Debian architecture and
// exits 1 when one is not of ARCH. Reads the ELF header itself (class, machine, ARM float ABI), one
// read per file, where `file` would be one process per file (minutes over a node_modules tree).
//   node scripts/elf-arch.mjs DIR ARCH
import { openSync, readSync, closeSync, readdirSync } from 'node:fs';
import path from 'node:path';

/** Debian architecture of an ELF header, or undefined when the bytes are not an ELF file. */
export function elfArch(header) {
  if (header.length < 40 || header.readUInt32BE(0) !== 0x7f454c46) return undefined;
  const is64 = header[4] === 2;
  const machine = header.readUInt16LE(18);
  if (machine === 0x3e && is64) return 'amd64';
  if (machine === 0xb7 && is64) return 'arm64';
  if (machine === 0x28 && !is64) {
    const flags = header.readUInt32LE(36);
    // EABI version 5 with the hard-float flag: armhf; soft-float: armel.
    return (flags & 0xff000000) === 0x05000000 && flags & 0x400 ? 'armhf' : 'armel';
  }
  return `machine-0x${machine.toString(16)}${is64 ? '-64' : '-32'}`;
}

function* files(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) yield* files(p);
    else if (e.isFile()) yield p;
  }
}

const [dir, want] = process.argv.slice(2);
if (!dir || !want) {
  process.stderr.write('usage: node scripts/elf-arch.mjs DIR ARCH\n');
  process.exit(2);
}
const header = Buffer.alloc(64);
let bad = 0;
for (const f of files(dir)) {
  const fd = openSync(f, 'r');
  const n = readSync(fd, header, 0, 64, 0);
  closeSync(fd);
  const arch = elfArch(header.subarray(0, n));
  if (arch === undefined) continue;
  process.stdout.write(`${arch}\t${path.relative(dir, f)}\n`);
  if (arch !== want) bad++;
}
if (bad > 0) {
  process.stderr.write(`${bad} ELF file(s) under ${dir} are not ${want}\n`);
  process.exit(1);
}
