import { describe, expect, it } from 'vitest';
import type { Fix } from '../../src/fix/fix.js';
import { QualityGate } from '../../src/gnss/quality-gate.js';
import { WEEK_ROLLOVER_MS, correctWeekRollover } from '../../src/gnss/rollover.js';

const T0 = Date.UTC(2026, 10, 22, 10, 0, 0);
const good: Fix = { time: T0, mode: 3, lat: 48.1, lon: 11.5, hdop: 1 };

describe('QualityGate', () => {
  it.each<[string, Partial<Fix>, string]>([
    ['no fix', { mode: 1 }, 'noFix'],
    ['no position', { lat: undefined }, 'noPosition'],
    ['latitude out of range', { lat: 91 }, 'outOfRange'],
    ['longitude out of range', { lon: -180.5 }, 'outOfRange'],
    ['exactly 0/0', { lat: 0, lon: 0 }, 'nullIsland'],
    ['HDOP too high', { hdop: 25 }, 'hdopTooHigh'],
    ['date before release minus margin', { time: Date.UTC(2019, 0, 1) }, 'dateTooOld'],
  ])('rejects %s', (_, change, reason) => {
    const gate = new QualityGate({ releaseDateMs: Date.UTC(2026, 10, 1) });
    expect(gate.check({ ...good, ...change })).toBe(reason);
    expect(gate.counters.rejected[reason as 'noFix']).toBe(1);
    expect(gate.counters.accepted).toBe(0);
  });

  it('rejects 2D when 3D is required', () => {
    expect(new QualityGate({ minMode: 3 }).check({ ...good, mode: 2 })).toBe('modeTooLow');
  });

  it('rejects time going backwards or repeating, and impossible jumps', () => {
    const gate = new QualityGate({ releaseDateMs: Date.UTC(2026, 10, 1) });
    expect(gate.check(good)).toBeUndefined();
    expect(gate.check({ ...good })).toBe('timeRepeated');
    expect(gate.check({ ...good, time: T0 - 1000 })).toBe('timeBackwards');
    // 0.1 degree of latitude (11 km) in one second.
    expect(gate.check({ ...good, time: T0 + 1000, lat: 48.2 })).toBe('impossibleJump');
    // 20 m in one second is fine.
    expect(gate.check({ ...good, time: T0 + 2000, lat: 48.1002 })).toBeUndefined();
  });

  it('starts again from new positions after a run of consistent fixes far from an outlier', () => {
    const gate = new QualityGate({ releaseDateMs: Date.UTC(2026, 10, 1) });
    // The first fix is the outlier; the next ones are 50 km away and agree with each other.
    expect(gate.check({ ...good, lat: 48.6 })).toBeUndefined();
    const results = [1, 2, 3, 4, 5, 6].map((i) => gate.check({ ...good, time: T0 + i * 1000, lat: 48.1 + i * 0.0001 }));
    expect(results).toEqual(['impossibleJump', 'impossibleJump', 'impossibleJump', 'impossibleJump', undefined, undefined]);
    expect(gate.counters.reanchored).toBe(1);
  });
});

describe('week rollover', () => {
  it('moves a pre-2019-rollover date forward by 1024 weeks, like gpsd', () => {
    const before = Date.UTC(2007, 2, 25, 12);
    expect(correctWeekRollover(before, { releaseDateMs: Date.UTC(2026, 10, 1) })).toBe(before + WEEK_ROLLOVER_MS);
    expect(new Date(before + WEEK_ROLLOVER_MS).toISOString()).toBe('2026-11-08T12:00:00.000Z');
    expect(correctWeekRollover(T0, { releaseDateMs: Date.UTC(2026, 10, 1) })).toBe(T0);
  });
});
