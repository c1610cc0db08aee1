/**
 * GPS week rollover: hand-written sentences from a receiver with old firmware (dates exactly 1024
 * weeks in the past), through the decoder and the whole pipeline; then the rule on the corpus,
 * where gpsd's own .chk files show the same correction for rst39 and neo-m8n.
 */
import { ManualClock } from '../../src/system/clock.js';
import { describe, expect, it } from 'vitest';
import { createDecoder } from '../../src/gnss/decoder.js';
import type { Fix, RecordedFix } from '../../src/fix/fix.js';
import { GnssPipeline } from '../../src/gnss/pipeline.js';
import { WEEK_ROLLOVER_MS, WeekRolloverCorrector, correctWeekRollover, earliestValidTime } from '../../src/gnss/rollover.js';
import type { LinkState, NmeaSource } from '../../src/gnss/sources/source.js';
import { silentLogger } from '../../src/log.js';
import { sentence } from '../../src/sim/receiver/nmea-format.js';
import { HAVE_CORPUS, corpusLogs, corpusPath } from './helpers/corpus.js';
import { decodeFile } from './helpers/decode-file.js';
import { readGpsdTpvs } from './helpers/gpsd-chk.js';

const RELEASE = Date.UTC(2026, 10, 1);
const DAY = 86_400_000;

/** One 1 Hz epoch (RMC, GGA) at second `s` of 2007-03-25 12:00 UTC: 1024 weeks before 2026-11-08. */
function oldFirmwareEpoch(s: number): string[] {
  const hhmmss = `1200${String(s).padStart(2, '0')}.00`;
  const lat = `4807.${String(38 + s).padStart(3, '0')}`;
  return [
    sentence(`GPRMC,${hhmmss},A,${lat},N,01131.000,E,022.4,084.4,250307,003.1,W,A`),
    sentence(`GPGGA,${hhmmss},${lat},N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,`),
  ];
}

function decode(lines: string[], correct?: (t: number) => number): Fix[] {
  const d = createDecoder(correct ? { correctTime: correct } : {});
  const out: Fix[] = [];
  for (const l of lines) out.push(...d.push(l));
  out.push(...d.flush());
  return out;
}

describe('GPS week rollover, hand-written sentences', () => {
  const lines = [0, 1, 2, 3].flatMap(oldFirmwareEpoch);

  it('moves a date 1024 weeks in the past forward when the host clock agrees, and counts it', () => {
    const corrector = new WeekRolloverCorrector({ releaseDateMs: RELEASE, clock: { wallMs: () => Date.UTC(2026, 10, 8, 12, 5) } });
    const fixes = decode(lines, corrector.correct);
    expect(fixes.map((f) => new Date(f.time).toISOString())).toEqual([
      '2026-11-08T12:00:00.000Z',
      '2026-11-08T12:00:01.000Z',
      '2026-11-08T12:00:02.000Z',
      // The last epoch is complete (the cycle end, GGA, was learned): emitted at flush.
      '2026-11-08T12:00:03.000Z',
    ]);
    expect(corrector.counters).toEqual({ corrected: 4, implausible: 0 });
  });

  it('also corrects when the host clock is not set (a Pi without a real-time clock boots in 1970 or at its image date)', () => {
    for (const host of [0, Date.UTC(2024, 0, 1)]) {
      const corrector = new WeekRolloverCorrector({ releaseDateMs: RELEASE, clock: { wallMs: () => host } });
      expect(decode(lines, corrector.correct)[0]?.time).toBe(Date.UTC(2026, 10, 8, 12));
      expect(corrector.counters.corrected).toBe(4);
    }
  });

  it('leaves the date alone when the corrected one would be more than a day ahead of a set host clock', () => {
    const corrector = new WeekRolloverCorrector({ releaseDateMs: RELEASE, clock: { wallMs: () => Date.UTC(2026, 10, 6, 12) } });
    const fixes = decode(lines, corrector.correct);
    expect(fixes[0]?.time).toBe(Date.UTC(2007, 2, 25, 12));
    expect(corrector.counters).toEqual({ corrected: 0, implausible: 4 });
    // Within a day ahead is still a correction (receiver and host disagree by less than a day).
    expect(
      correctWeekRollover(Date.UTC(2007, 2, 25, 12), { releaseDateMs: RELEASE, clock: { wallMs: () => Date.UTC(2026, 10, 7, 12, 1) } }),
    ).toBe(Date.UTC(2026, 10, 8, 12));
  });

  it('never moves a date that is not before the release date minus the margin, nor one that stays too old', () => {
    const clock = { wallMs: () => Date.UTC(2026, 10, 24) };
    const recent = Date.UTC(2026, 0, 1);
    expect(correctWeekRollover(recent, { releaseDateMs: RELEASE, clock })).toBe(recent);
    // 1024 weeks after 1990 is 2009: still before the release date, and three periods land in 2049.
    const ancient = Date.UTC(1990, 0, 1);
    expect(correctWeekRollover(ancient, { releaseDateMs: RELEASE, clock })).toBe(ancient);
    expect(earliestValidTime({ releaseDateMs: RELEASE, minDateMarginDays: 10 })).toBe(RELEASE - 10 * DAY);
  });

  it('the pipeline records the corrected fixes, and its state counts the corrections for status', async () => {
    const source = new LinesSource(lines);
    const recorded: RecordedFix[] = [];
    const pipeline = new GnssPipeline({
      source,
      logger: silentLogger(),
      sink: { record: (f) => recorded.push(f) },
      quality: { releaseDateMs: RELEASE },
      recording: { mode: 'all' },
      clock: new ManualClock({ wallMs: Date.UTC(2026, 10, 8, 12, 0, 5) }),
    });
    await pipeline.start();
    source.emit();
    await pipeline.stop();
    expect(recorded.map((f) => f.time)).toEqual([0, 1, 2, 3].map((s) => Date.UTC(2026, 10, 8, 12, 0, s)));
    expect(pipeline.state().counters.rollover).toEqual({ corrected: 4, implausible: 0 });
    expect(pipeline.state().counters.quality.rejected.dateTooOld).toBe(0);
  });

  it('an implausible correction is not made: the gate rejects the old date and says so', async () => {
    const source = new LinesSource(lines);
    const recorded: RecordedFix[] = [];
    const pipeline = new GnssPipeline({
      source,
      logger: silentLogger(),
      sink: { record: (f) => recorded.push(f) },
      quality: { releaseDateMs: RELEASE },
      recording: { mode: 'all' },
      clock: new ManualClock({ wallMs: Date.UTC(2026, 9, 1) }),
    });
    await pipeline.start();
    source.emit();
    await pipeline.stop();
    expect(recorded).toEqual([]);
    expect(pipeline.state().counters.rollover).toEqual({ corrected: 0, implausible: 4 });
    expect(pipeline.state().counters.quality.rejected.dateTooOld).toBe(4);
  });
});

describe.skipIf(!HAVE_CORPUS)('GPS week rollover on the corpus', () => {
  it('with the host clock unset, moves rst39 and neo-m8n exactly where gpsd moved them', () => {
    for (const log of ['rst39.log', 'neo-m8n.log']) {
      // gpsd 3.2x was built after 2019: its reference is later than these logs' 2014/2015 dates.
      const corrector = new WeekRolloverCorrector({
        releaseDateMs: Date.UTC(2020, 0, 1),
        minDateMarginDays: 0,
        clock: { wallMs: () => 0 },
      });
      const ours = new Set(decodeFile(corpusPath(log), { correctTime: corrector.correct }).map((f) => f.time));
      const gpsd = [...readGpsdTpvs(corpusPath(`${log}.chk`)).keys()];
      expect(gpsd.length).toBeGreaterThan(10);
      expect(
        gpsd.filter((t) => !ours.has(t)),
        log,
      ).toEqual([]);
      expect(corrector.counters.corrected, log).toBeGreaterThan(10);
    }
  });

  it('on every log: a fix is either unchanged or moved by whole periods into [earliest, host + 1 day]', () => {
    const now = Date.UTC(2026, 11, 1);
    const earliest = earliestValidTime({ releaseDateMs: RELEASE });
    let corrected = 0;
    let implausible = 0;
    for (const log of corpusLogs()) {
      const corrector = new WeekRolloverCorrector({ releaseDateMs: RELEASE, clock: { wallMs: () => now } });
      const raw = decodeFile(corpusPath(log));
      const fixed = decodeFile(corpusPath(log), { correctTime: corrector.correct });
      expect(fixed.length, log).toBe(raw.length);
      raw.forEach((r, i) => {
        const t = fixed[i]?.time ?? NaN;
        if (t === r.time) return;
        expect((t - r.time) % WEEK_ROLLOVER_MS, log).toBe(0);
        expect(t, log).toBeGreaterThanOrEqual(earliest);
        expect(t, log).toBeLessThanOrEqual(now + DAY);
      });
      corrected += corrector.counters.corrected;
      implausible += corrector.counters.implausible;
    }
    // 2006-2007 logs land in the year before the release (eXplorist210, humminbird, haicom...);
    // most old logs would land in the future and are left alone.
    expect(corrected).toBeGreaterThan(100);
    expect(implausible).toBeGreaterThan(1000);
  });
});

/** The given lines as one chunk when `emit` is called (the test drives time, not a timer). */
class LinesSource implements NmeaSource {
  readonly #lines: string[];
  readonly #listeners: ((chunk: Buffer) => void)[] = [];
  constructor(lines: string[]) {
    this.#lines = lines;
  }
  async start(): Promise<void> {}
  async stop(): Promise<void> {}
  onData(listener: (chunk: Buffer) => void): void {
    this.#listeners.push(listener);
  }
  link(): LinkState {
    return { status: 'open', path: 'test', attempts: 0, bytes: 0 };
  }
  emit(): void {
    const chunk = Buffer.from(`${this.#lines.join('\r\n')}\r\n`, 'latin1');
    for (const l of this.#listeners) l(chunk);
  }
}
