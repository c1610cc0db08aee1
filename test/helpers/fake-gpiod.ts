import { chmodSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { GpiodTools } from '../../src/motion/gpiod-tools.js';
import { tempDir } from './tmp.js';

/**
 * Stand-ins for Debian 13's gpiod 2.2.1 tools, for machines with no GPIO chip: executables the
 * agent runs as it runs the real ones, that refuse any other arguments and print what the real ones
 * print. The formats, from gpiomon(1) / gpioget(1) of libgpiod v2.2.1 and its tools/gpiomon.c:
 *   gpioget --numeric -c CHIP [-l] LINE     "1" or "0" (active, active-low applied), newline
 *   gpiomon --banner -c CHIP [-l] -F '%E %S' LINE
 *                                           "Monitoring line '17'..." once the line is requested,
 *                                           then per edge "rising 5342.123456789" ('falling'),
 *                                           %S being the kernel's monotonic seconds
 *   a failure: "<tool>: <message>" on stderr, exit 1 (tools-common.c die()/die_perror()).
 * The line's level is the file `level` (0/1) in the tools' directory; `gpioget.stderr` or
 * `gpiomon.stderr` there makes that tool fail with its contents; each gpiomon start appends its
 * pid to `gpiomon.pids`.
 */
export interface FakeGpiod {
  tools: GpiodTools;
  dir: string;
  setLevel(level: 0 | 1): void;
  failWith(tool: 'gpioget' | 'gpiomon', stderr: string | undefined): void;
  gpiomonPids(): number[];
}

const COMMON = `
const fs = require('node:fs');
const path = require('node:path');
const dir = ${'__DIR__'};
const tool = path.basename(process.argv[1]);
const args = process.argv.slice(2);
const die = (msg) => { process.stderr.write(tool + ': ' + msg + '\\n'); process.exit(1); };
const failure = path.join(dir, tool + '.stderr');
if (fs.existsSync(failure)) { process.stderr.write(fs.readFileSync(failure, 'utf8')); process.exit(1); }
const level = () => fs.readFileSync(path.join(dir, 'level'), 'utf8').trim() === '1';
`;

const GPIOGET = `
const m = /^--numeric -c (\\S+)( -l)? (\\d+)$/.exec(args.join(' '));
if (!m) die('try gpioget --help');
process.stdout.write(((level() !== Boolean(m[2])) ? '1' : '0') + '\\n');
`;

const GPIOMON = `
const m = /^--banner -c (\\S+)( -l)? -F %E %S (\\d+)$/.exec(args.join(' '));
if (!m) die('try gpiomon --help');
// Before anything a test can see: until a handler is installed, SIGTERM kills by its default action.
process.on('SIGTERM', () => process.exit(0));
fs.appendFileSync(path.join(dir, 'gpiomon.pids'), process.pid + '\\n');
// The line is requested (its level taken) before the banner, as the real one does.
let was = level();
process.stdout.write("Monitoring line '" + m[3] + "'...\\n");
setInterval(() => {
  const now = level();
  if (now === was) return;
  was = now;
  const active = now !== Boolean(m[2]);
  const ns = process.hrtime.bigint();
  process.stdout.write((active ? 'rising' : 'falling') + ' ' + (ns / 1000000000n) + '.' + String(ns % 1000000000n).padStart(9, '0') + '\\n');
}, 10);
`;

export function fakeGpiod(level: 0 | 1 = 0): FakeGpiod {
  const dir = tempDir('ta-gpiod-');
  const write = (name: string, body: string): string => {
    const file = path.join(dir, name);
    writeFileSync(file, `#!${process.execPath}\n${COMMON.replace('__DIR__', JSON.stringify(dir))}${body}`);
    chmodSync(file, 0o755);
    return file;
  };
  writeFileSync(path.join(dir, 'level'), `${level}\n`);
  return {
    dir,
    tools: { gpioget: write('gpioget', GPIOGET), gpiomon: write('gpiomon', GPIOMON) },
    // Renamed into place: the tools never read a half-written level.
    setLevel: (l) => {
      writeFileSync(path.join(dir, 'level.tmp'), `${l}\n`);
      renameSync(path.join(dir, 'level.tmp'), path.join(dir, 'level'));
    },
    failWith: (tool, stderr) => {
      const file = path.join(dir, `${tool}.stderr`);
      if (stderr === undefined) rmSync(file, { force: true });
      else writeFileSync(file, stderr);
    },
    gpiomonPids: () => {
      const file = path.join(dir, 'gpiomon.pids');
      return existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').map(Number) : [];
    },
  };
}
