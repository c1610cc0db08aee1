/**
 * Hostile input: 120,000 random and mutated lines (bit flips, truncation, binary, 10 kB lines,
 * wrong checksums, spliced sentences) through decoder, quality gate and recording policy. No
 * exception may escape, memory must stay bounded, and no fix that passes the gate may break it.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createDecoder } from '../../src/gnss/decoder.js';
import type { Fix } from '../../src/fix/fix.js';
import { distanceAndBearing } from '../../src/gnss/geodesy.js';
import { QualityGate } from '../../src/gnss/quality-gate.js';
import { RecordingPolicy } from '../../src/gnss/recording-policy.js';
import { earliestValidTime } from '../../src/gnss/rollover.js';
import { HAVE_CORPUS, corpusLogs, corpusPath } from './helpers/corpus.js';
import { sentence as withChecksum } from '../../src/sim/receiver/nmea-format.js';
import { seededRandom as rng } from '../../src/sim/random.js';

const SEEDS = [
  '$GPGGA,123519,4807.038,N,01131.324,E,1,08,0.9,545.4,M,46.9,M,,*47',
  '$GPRMC,123519,A,4807.038,N,01131.000,E,022.4,084.4,221126,003.1,W*6A',
  '$GNGSA,A,3,13,16,21,15,10,29,27,20,,,,,1.05,0.64,0.83,1*03',
  '$GAGSV,3,1,09,02,00,179,,04,09,321,,07,11,134,11,11,10,227,,7*7F',
  '$GPZDA,123519.00,22,11,2026,00,00*6D',
];

describe('hostile input', () => {
  it('survives 120,000 mutated lines with bounded memory and no gate violation', () => {
    const random = rng(20261122);
    const base = HAVE_CORPUS
      ? corpusLogs()
          .flatMap((l) => readFileSync(corpusPath(l), 'latin1').split('\n'))
          .filter((l) => l.includes('$'))
      : SEEDS;
    const pick = (): string => base[Math.floor(random() * base.length)] ?? '';
    const mutate = (line: string): string => {
      const r = random();
      if (r < 0.15) return line; // intact
      if (r < 0.35) {
        // bit flips
        const chars = [...line];
        for (let k = 0; k < 1 + random() * 3; k++) {
          const i = Math.floor(random() * chars.length);
          chars[i] = String.fromCharCode((chars[i]?.charCodeAt(0) ?? 0) ^ (1 << Math.floor(random() * 8)));
        }
        return chars.join('');
      }
      if (r < 0.5) return line.slice(0, Math.floor(random() * line.length)); // truncation
      if (r < 0.6)
        return Array.from({ length: Math.floor(random() * 200) }, () => String.fromCharCode(Math.floor(random() * 256))).join(''); // binary
      if (r < 0.61) return 'Z'.repeat(10_240); // 10 kB line
      if (r < 0.75)
        return line.replace(
          /\*..$/,
          `*${Math.floor(random() * 256)
            .toString(16)
            .padStart(2, '0')}`,
        ); // wrong checksum
      if (r < 0.85) {
        // valid checksum over mutated fields: the decoders must cope with nonsense values
        const body = line.slice(line.indexOf('$') + 1).replace(/\*..\s*$/, '');
        const fields = body.split(',');
        const i = 1 + Math.floor(random() * Math.max(fields.length - 1, 1));
        fields[i] = ['', '-0', '9999999', 'NaN', '1e309', '-45.5', 'A', '99.99', '000000', '3'][Math.floor(random() * 10)] ?? '';
        return withChecksum(fields.join(','));
      }
      if (r < 0.9) return pick().slice(0, 20) + pick(); // spliced
      return `$$${line}\r`;
    };

    const gate = new QualityGate({ releaseDateMs: Date.UTC(1995, 0, 1) });
    const policy = new RecordingPolicy();
    const passed: Fix[] = [];
    let reanchoredBefore = 0;
    const decoder = createDecoder({
      maxLineLength: 4096,
      onFix: (fix) => {
        if (gate.check(fix) !== undefined) return;
        const reanchored = gate.counters.reanchored !== reanchoredBefore;
        reanchoredBefore = gate.counters.reanchored;
        const prev = passed[passed.length - 1];
        // The gate's promise: a real, plausible fix.
        expect(fix.mode).toBeGreaterThanOrEqual(2);
        expect(Math.abs(fix.lat ?? 999)).toBeLessThanOrEqual(90);
        expect(Math.abs(fix.lon ?? 999)).toBeLessThanOrEqual(180);
        expect(fix.lat === 0 && fix.lon === 0).toBe(false);
        expect(fix.hdop ?? 0).toBeLessThanOrEqual(20);
        expect(fix.time).toBeGreaterThanOrEqual(earliestValidTime({ releaseDateMs: Date.UTC(1995, 0, 1) }));
        if (prev) expect(fix.time).toBeGreaterThan(prev.time);
        for (const v of [fix.lat, fix.lon, fix.altMSL, fix.speed, fix.track, fix.hdop])
          if (v !== undefined) expect(Number.isFinite(v)).toBe(true);
        // A jump from the previous accepted fix is allowed only when the gate re-anchored.
        if (prev && !reanchored) {
          const d = distanceAndBearing(prev.lat ?? 0, prev.lon ?? 0, fix.lat ?? 0, fix.lon ?? 0).distance;
          expect(d / ((fix.time - prev.time) / 1000)).toBeLessThanOrEqual(300 / 3.6);
        }
        passed.push(fix);
        policy.offer(fix);
      },
    });

    const heapBefore = process.memoryUsage().heapUsed;
    let heapPeak = heapBefore;
    const N = 120_000;
    let chunk = '';
    for (let i = 0; i < N; i++) {
      chunk += `${mutate(pick())}${random() < 0.02 ? '' : '\n'}`;
      if (chunk.length > 8192 || i === N - 1) {
        // Split at a random point, as serial reads do.
        const cut = Math.floor(random() * chunk.length);
        decoder.pushChunk(Buffer.from(chunk.slice(0, cut), 'latin1'));
        decoder.pushChunk(Buffer.from(chunk.slice(cut), 'latin1'));
        chunk = '';
      }
      if (i % 20_000 === 0) heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
    }
    decoder.flush();
    heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);

    const c = decoder.counters;
    expect(c.lines.lines).toBeGreaterThan(N * 0.95);
    expect(c.lines.overlong).toBeGreaterThan(100);
    expect(c.sentences.rejected.badChecksum ?? 0).toBeGreaterThan(10_000);
    expect(c.sentences.malformed + (c.sentences.rejected.badCharacter ?? 0)).toBeGreaterThan(100);
    expect(c.epochs.epochs).toBeGreaterThan(100);
    expect(gate.counters.accepted).toBeGreaterThan(0);
    // Nothing accumulates: the heap may grow by garbage not yet collected, never by the input size.
    expect(heapPeak - heapBefore).toBeLessThan(64 * 1024 * 1024);
  });
});
