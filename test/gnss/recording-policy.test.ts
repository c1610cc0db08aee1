/**
 * The recording policy on synthetic drives with the default thresholds (30 s, 100 m, 10 degrees,
 * 10 km/h, at most one per second, stopped below 3 km/h / moving above 6 km/h, heartbeat 300 s).
 */
import { describe, expect, it } from 'vitest';
import type { Fix, RecordedFix } from '../../src/gnss/fix.js';
import { RecordingPolicy } from '../../src/gnss/recording-policy.js';

const T0 = Date.UTC(2026, 10, 22, 8, 0, 0);
const M_PER_DEG_LAT = 111_195;

/** A drive as one fix per second: each step gives speed (km/h) and heading (deg). */
function drive(steps: { kmh: number; heading: number; jitterM?: number }[]): Fix[] {
  let lat = 52.0;
  let lon = 5.0;
  let seed = 7;
  const rand = (): number => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31 - 0.5;
  };
  return steps.map((s, i) => {
    const d = s.kmh / 3.6;
    lat += (d * Math.cos((s.heading * Math.PI) / 180)) / M_PER_DEG_LAT;
    lon += (d * Math.sin((s.heading * Math.PI) / 180)) / (M_PER_DEG_LAT * Math.cos((lat * Math.PI) / 180));
    const j = s.jitterM ?? 0;
    return {
      time: T0 + i * 1000,
      mode: 3,
      lat: lat + (rand() * j) / M_PER_DEG_LAT,
      lon: lon + (rand() * j) / M_PER_DEG_LAT,
      speed: s.kmh / 3.6,
      track: s.heading,
    };
  });
}

function record(fixes: Fix[], options = {}): RecordedFix[] {
  const policy = new RecordingPolicy(options);
  return fixes.flatMap((f) => {
    const r = policy.offer(f);
    return r ? [r] : [];
  });
}

const seconds = (rs: RecordedFix[]): number[] => rs.map((r) => (r.time - T0) / 1000);
const repeat = <T>(n: number, x: T): T[] => Array.from({ length: n }, () => x);

describe('RecordingPolicy (adaptive)', () => {
  it('straight road at 50 km/h: one fix per 100 m (every 8 s)', () => {
    const rs = record(drive(repeat(60, { kmh: 50, heading: 90 })));
    expect(seconds(rs)).toEqual([0, 8, 16, 24, 32, 40, 48, 56]);
    expect(rs.slice(1).every((r) => r.reason === 'distance')).toBe(true);
  });

  it('slow straight road (10 km/h): the 30 s interval fires before 100 m', () => {
    const rs = record(drive(repeat(70, { kmh: 10, heading: 0 })));
    expect(seconds(rs)).toEqual([0, 30, 60]);
    expect(rs[1]?.reason).toBe('interval');
  });

  it('city with turns: a fix at each turn (heading change over 10 degrees)', () => {
    const steps = [
      ...repeat(5, { kmh: 30, heading: 0 }),
      ...repeat(5, { kmh: 30, heading: 90 }),
      ...repeat(5, { kmh: 30, heading: 180 }),
      ...repeat(5, { kmh: 30, heading: 185 }),
    ];
    const rs = record(drive(steps));
    expect(seconds(rs)).toEqual([0, 5, 10]);
    expect(rs.map((r) => r.reason)).toEqual(['first', 'heading', 'heading']);
  });

  it('stop at a light: transitions at stop and start, nothing while stopped', () => {
    const steps = [
      ...repeat(4, { kmh: 40, heading: 0 }),
      { kmh: 20, heading: 0 },
      { kmh: 2, heading: 0 },
      ...repeat(40, { kmh: 0, heading: 0, jitterM: 3 }),
      { kmh: 8, heading: 0 },
      { kmh: 20, heading: 0 },
    ];
    const rs = record(drive(steps));
    expect(rs.map((r) => [(r.time - T0) / 1000, r.reason, r.transition ?? false])).toEqual([
      [0, 'first', false],
      [4, 'speed', false],
      [5, 'stopped', true],
      [46, 'moving', true],
      [47, 'speed', false],
    ]);
  });

  it('parked with jitter (and jitter speed up to 5 km/h): only heartbeats every 300 s', () => {
    const steps = Array.from({ length: 1000 }, (_, i) => ({ kmh: (i * 7) % 6, heading: (i * 37) % 360, jitterM: 15 }));
    const rs = record(drive(steps));
    expect(seconds(rs)).toEqual([0, 300, 600, 900]);
    expect(rs.slice(1).every((r) => r.reason === 'heartbeat')).toBe(true);
  });

  it('never more than one fix per second, even at 10 Hz through a sharp turn', () => {
    const fixes = drive(repeat(50, { kmh: 50, heading: 0 })).map((f, i) => ({ ...f, time: T0 + i * 100, track: (i * 15) % 360 }));
    const rs = record(fixes);
    for (let i = 1; i < rs.length; i++) expect((rs[i]?.time ?? 0) - (rs[i - 1]?.time ?? 0)).toBeGreaterThanOrEqual(1000);
    expect(rs.length).toBe(5);
  });

  it('"all" records every fix', () => {
    const fixes = drive(repeat(10, { kmh: 0, heading: 0 }));
    expect(record(fixes, { mode: 'all' })).toHaveLength(10);
  });
});
