/**
 * The assembled pipeline on a replayed corpus log: lifecycle, recorded fixes through the sink,
 * state for the status tools; and `nmea decode`'s stream function on the same log.
 */
import { PassThrough } from 'node:stream';
import { createReadStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { decodeStream, fixToJson } from '../../src/cli/nmea.js';
import type { RecordedFix } from '../../src/fix/fix.js';
import { GnssPipeline } from '../../src/gnss/pipeline.js';
import { ReplaySource } from '../../src/gnss/sources/replay-source.js';
import { silentLogger } from '../../src/log.js';
import { driveText, generateDrive } from '../../src/sim/receiver/index.js';
import { HAVE_CORPUS, corpusPath } from './helpers/corpus.js';
import { decodeFile } from './helpers/decode-file.js';

const LOG = 'quectel-l76k-nmea.log'; // 2026 dates, 150 fixes, GPS+GLONASS+BeiDou

describe.skipIf(!HAVE_CORPUS)('GnssPipeline with a replay source', () => {
  it('records gated fixes into the sink and exposes state', async () => {
    const recorded: RecordedFix[] = [];
    const source = new ReplaySource({ file: corpusPath(LOG), speed: 0, logger: silentLogger() });
    const pipeline = new GnssPipeline({
      source,
      logger: silentLogger(),
      sink: { record: (f) => recorded.push(f) },
      quality: {},
      recording: { mode: 'all' },
    });
    expect(pipeline.state().counters.recorded).toBe(0);
    await pipeline.start();
    await source.finished();
    await pipeline.stop();

    const decoded = decodeFile(corpusPath(LOG)).filter((f) => f.mode >= 2);
    const state = pipeline.state();
    expect(recorded.length).toBe(state.counters.quality.accepted);
    expect(recorded.length).toBeGreaterThan(decoded.length * 0.9);
    expect(recorded.every((f) => f.reason === 'all' && f.mode >= 2)).toBe(true);
    expect(state.link.status).toBe('stopped');
    expect(state.link.lines).toBeGreaterThan(2000);
    expect(state.link.lastValidSentenceAt).toBeTypeOf('number');
    expect(state.lastFix?.time).toBe(decoded.at(-1)?.time);
    expect(new Set(state.satellites.map((s) => s.constellation))).toEqual(new Set(['GPS', 'GLONASS', 'BeiDou']));
    expect(state.satellites.some((s) => s.used)).toBe(true);
  });

  it('the default (path) recording keeps far fewer fixes than "all" on the same drive, while onEpoch sees every epoch', async () => {
    const recorded: RecordedFix[] = [];
    const epochs: number[] = [];
    const source = new ReplaySource({ file: corpusPath(LOG), speed: 0, logger: silentLogger() });
    const pipeline = new GnssPipeline({
      source,
      logger: silentLogger(),
      sink: { record: (f) => recorded.push(f) },
      onEpoch: (f) => {
        epochs.push(f.time);
        if (epochs.length === 3) throw new Error('a failing listener must not stop the pipeline');
      },
    });
    await pipeline.start();
    await source.finished();
    await pipeline.stop();
    expect(recorded.length).toBeGreaterThan(0);
    expect(recorded.length).toBeLessThan(pipeline.state().counters.quality.accepted / 2);
    expect(epochs).toEqual(decodeFile(corpusPath(LOG)).map((f) => f.time));
  });
});

describe.skipIf(!HAVE_CORPUS)('nmea decode', () => {
  it('prints one JSON line per epoch with the documented names', async () => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (c: Buffer) => (text += c.toString()));
    const counters = await decodeStream(createReadStream(corpusPath('garmin15x.log')), out, {});
    const lines = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => JSON.stringify(l))).toEqual(decodeFile(corpusPath('garmin15x.log')).map(fixToJson));
    expect(lines[0]).toEqual({
      time: '2022-10-18T11:32:58.000Z',
      mode: 3,
      lat: 32.64858,
      lon: -108.37411,
      altMSL: 1577.4,
      speed: (5.3 * 1852) / 3600,
      track: 247.1,
      satellitesUsed: 8,
      hdop: 1.1,
    });
    expect(Object.keys(lines[0] ?? {})).toEqual(['time', 'mode', 'lat', 'lon', 'altMSL', 'speed', 'track', 'satellitesUsed', 'hdop']);
    expect(counters.sentences.proprietary).toBeGreaterThan(0);
    expect(counters.sentences.rejected.comment).toBeGreaterThan(0);
  });

  it('--rollover moves pre-rollover dates forward by 1024 weeks when the result is plausible', async () => {
    const firstTime = async (now: number): Promise<string> => {
      const out = new PassThrough();
      let text = '';
      out.on('data', (c: Buffer) => (text += c.toString()));
      await decodeStream(createReadStream(corpusPath('garmin15x.log')), out, { rollover: true, clock: { wallMs: () => now } });
      return (JSON.parse(text.split('\n')[0] ?? '{}') as { time: string }).time;
    };
    // Host clock not set (a Pi without RTC at boot): nothing bounds the correction.
    expect(await firstTime(0)).toBe('2042-06-03T11:32:58.000Z');
    // Host clock set in 2026: 2042 is years ahead of it, so the 2022 date stays (and the gate rejects it).
    expect(await firstTime(Date.UTC(2026, 10, 24))).toBe('2022-10-18T11:32:58.000Z');
  });
});

describe('GnssPipeline stop', () => {
  it('records the fix the path policy still held back, so a drive that ends moving ends where the receiver did', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ta-pipeline-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'drive.nmea');
    const legs = [{ kind: 'drive' as const, phase: 'city' as const, heading: 45, distanceM: 1500, cruiseMps: 14, endMps: 14 }];
    writeFileSync(file, driveText(generateDrive({ seed: 3, legs })));
    const recorded: RecordedFix[] = [];
    const source = new ReplaySource({ file, speed: 0, logger: silentLogger() });
    const pipeline = new GnssPipeline({ source, logger: silentLogger(), sink: { record: (f) => recorded.push(f) }, quality: {} });
    await pipeline.start();
    await source.finished();
    const before = recorded.length;
    expect(recorded.at(-1)?.reason).not.toBe('last');
    await pipeline.stop();
    expect(recorded).toHaveLength(before + 1);
    expect(recorded.at(-1)).toMatchObject({ reason: 'last', time: pipeline.state().lastFix?.time });
    expect(pipeline.state().counters.recorded).toBe(recorded.length);
  });
});
