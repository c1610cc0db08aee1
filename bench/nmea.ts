/**
 * `npm run bench:nmea`: the whole shared corpus concatenated and repeated to at least 1,000,000
 * sentences, through (a) nmea-simple alone and (b) the full pipeline to fixes (framing, checksum,
 * decoding, epochs, quality gate, recording policy), in one process. Prints sentences per second
 * for each, the ratio b/a, and the peak RSS. Not a test: figures depend on the machine.
 *
 * Rates are per CPU-second of this process (user + system), as gpsd's "85,000 per CPU-second" is,
 * so that other load on the machine does not skew them; wall-clock rates are printed beside.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDecoder } from '../src/gnss/decoder.js';
import { QualityGate } from '../src/gnss/quality-gate.js';
import { RecordingPolicy } from '../src/gnss/recording-policy.js';

const require = createRequire(import.meta.url);
const nmeaSimple = require('nmea-simple') as { parseNmeaSentence(s: string): unknown };

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, here.includes(`${path.sep}dist${path.sep}`) ? '../../..' : '..');
const corpus = path.resolve(repoRoot, '../shared/nmea-corpus');
const TARGET = 1_000_000;

const files = readdirSync(corpus)
  .filter((f) => f.endsWith('.log'))
  .sort();
const base: string[] = [];
for (const f of files) {
  for (const raw of readFileSync(path.join(corpus, f), 'latin1').split('\n')) {
    const line = raw.replace(/\r$/, '');
    if (line.includes('$')) base.push(line);
  }
}
const lines: string[] = [];
while (lines.length < TARGET) lines.push(...base);
const text = `${lines.join('\n')}\n`;
const chunks: Buffer[] = [];
const buf = Buffer.from(text, 'latin1');
for (let i = 0; i < buf.length; i += 4096) chunks.push(buf.subarray(i, i + 4096));

interface Run {
  /** CPU milliseconds. */
  ms: number;
  wallMs: number;
}

function cpuMs(since: NodeJS.CpuUsage): number {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1000;
}

function runA(): Run & { ok: number } {
  let ok = 0;
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  for (const line of lines) {
    try {
      nmeaSimple.parseNmeaSentence(line);
      ok++;
    } catch {
      // nmea-simple throws on every unknown, proprietary or bad sentence.
    }
  }
  return { ms: cpuMs(c0), wallMs: performance.now() - t0, ok };
}

function runB(): Run & { fixes: number; recorded: number } {
  // The corpus dates back to 1999: a release date of 2000 lets its fixes through the date check.
  const gate = new QualityGate({ releaseDateMs: Date.UTC(2000, 0, 1), minDateMarginDays: 365 });
  const policy = new RecordingPolicy({});
  let fixes = 0;
  let recorded = 0;
  const decoder = createDecoder({
    onFix: (fix) => {
      fixes++;
      if (gate.check(fix) === undefined) recorded += policy.offer(fix).length;
    },
  });
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  for (const c of chunks) decoder.pushChunk(c);
  decoder.flush();
  return { ms: cpuMs(c0), wallMs: performance.now() - t0, fixes, recorded };
}

// One warm-up round each so both are measured with optimised code, then the best of three.
runA();
runB();
let a = runA();
let b = runB();
for (let i = 0; i < 2; i++) {
  const a2 = runA();
  const b2 = runB();
  if (a2.ms < a.ms) a = a2;
  if (b2.ms < b.ms) b = b2;
}
const n = lines.length;
const rateA = n / (a.ms / 1000);
const rateB = n / (b.ms / 1000);
const fmt = (x: number): string => Math.round(x).toLocaleString('en-US');
console.log(
  `corpus: ${files.length} logs, ${base.length} sentence lines, repeated to ${fmt(n)} lines (${(buf.length / 1e6).toFixed(1)} MB)`,
);
console.log(
  `(a) nmea-simple alone:       ${fmt(rateA)} sentences per CPU-second (wall ${fmt(n / (a.wallMs / 1000))}/s; ${fmt(a.ok)} parsed without throwing)`,
);
console.log(
  `(b) full pipeline to fixes:  ${fmt(rateB)} sentences per CPU-second (wall ${fmt(n / (b.wallMs / 1000))}/s; ${fmt(b.fixes)} epochs, ${fmt(b.recorded)} recorded)`,
);
console.log(`ratio b/a: ${(rateB / rateA).toFixed(2)}`);
console.log(`peak RSS: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);
