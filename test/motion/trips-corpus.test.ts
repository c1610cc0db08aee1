import { describe, expect, it } from 'vitest';
import { CORPUS } from '../../bench/trips-corpus.js';
import { evaluateDrive } from '../../bench/trips-eval.js';
import { CountsHistory } from '../../src/motion/counts-history.js';

/**
 * bench:trips' corpus as a test: each drive (NMEA decoded and gated as the daemon does, through
 * MotionTracker with restarts and power cuts) meets the trip goals, and a FAIL names what went wrong.
 */
describe('the vehicle-day corpus (bench:trips)', () => {
  for (const entry of CORPUS) {
    it(`${entry.name}: no spurious trip, every stop and engine change dated within 5 s, odometer within 1 %`, () => {
      const row = evaluateDrive(entry.build());
      expect(row.why).toEqual([]);
      expect(row.pass).toBe(true);
    });
  }
});

describe('the counts an event dated back carries', () => {
  it('interpolates within a second, keeps the edge of a gap, and holds a bounded window', () => {
    const h = new CountsHistory(60_000);
    for (let t = 0; t <= 10_000; t += 100) h.push({ time: t, odometerM: t / 100, engineS: t / 1000 });
    expect(h.at(5_050)!.odometerM).toBeCloseTo(50.5, 6);
    // A gap of 30 s, 600 m driven in it: before the far fix, the counts of the gap's edge.
    h.push({ time: 40_000, odometerM: 700, engineS: 40 });
    expect(h.at(10_000)!.odometerM).toBe(100);
    expect(h.at(25_000)!.odometerM).toBe(100);
    expect(h.at(40_000)!.odometerM).toBe(700);
    for (let t = 40_100; t <= 3_600_000; t += 100) h.push({ time: t, odometerM: t / 100, engineS: t / 1000 });
    expect(h.at(3_600_000 - 30_000)!.odometerM).toBeCloseTo(35_700, 6);
    expect(h.at(0)!.time).toBeGreaterThanOrEqual(3_600_000 - 61_000);
  });
});
