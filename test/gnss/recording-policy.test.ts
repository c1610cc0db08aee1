/**
 * The recording policies on hand-made tracks (one fix per second unless stated). `adaptive` with
 * the thresholds it shipped with (30 s, 100 m, 10 degrees, 10 km/h); both with at most one record
 * per second, stopped below 3 km/h / moving above 6 km/h; heartbeat when stopped 300 s (adaptive, as
 * shipped) and the default 3600 s (path).
 */
import { describe, expect, it } from 'vitest';
import { createDecoder } from '../../src/gnss/decoder.js';
import type { Fix, RecordedFix } from '../../src/fix/fix.js';
import { QualityGate } from '../../src/gnss/quality-gate.js';
import { RecordingPolicy, type RecordingPolicyOptions } from '../../src/gnss/recording-policy.js';
import { trackFidelity } from '../../src/gnss/track-fidelity.js';
import { driveText, generateDrive } from '../../src/sim/receiver/index.js';

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

const ADAPTIVE: Partial<RecordingPolicyOptions> = { mode: 'adaptive', maxIntervalS: 30, stoppedHeartbeatS: 300, parkedHeartbeatS: 300 };

function record(fixes: Fix[], options: Partial<RecordingPolicyOptions> = ADAPTIVE): RecordedFix[] {
  const policy = new RecordingPolicy(options);
  return fixes.flatMap((f) => policy.offer(f));
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

  it('parked for longer than stoppedHeartbeatS: the heartbeats after the first come every parkedHeartbeatS', () => {
    const steps = Array.from({ length: 4000 }, (_, i) => ({ kmh: (i * 7) % 3, heading: (i * 37) % 360, jitterM: 15 }));
    const rs = record(drive(steps), { ...ADAPTIVE, parkedHeartbeatS: 900 });
    expect(seconds(rs)).toEqual([0, 300, 1200, 2100, 3000, 3900]);
    // Below stoppedHeartbeatS it is stoppedHeartbeatS.
    expect(seconds(record(drive(steps.slice(0, 1000)), { ...ADAPTIVE, parkedHeartbeatS: 60 }))).toEqual([0, 300, 600, 900]);
  });

  it('a crawl below the moving speed (a jam) is not parked: its heartbeats stay at stoppedHeartbeatS', () => {
    // 2 km/h due north for over an hour: 2.2 km, "stopped" by the speed, never parked.
    const crawl = Array.from({ length: 4000 }, () => ({ kmh: 2, heading: 0 }));
    const rs = record(drive(crawl), { ...ADAPTIVE, parkedHeartbeatS: 900 });
    expect(seconds(rs)).toEqual(Array.from({ length: 14 }, (_, i) => i * 300));
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
    expect(new RecordingPolicy({ mode: 'all' }).flush()).toEqual([]);
  });
});

/** Offers every fix, then flushes: what a run that stops after the last fix records. */
function recordPath(fixes: Fix[], options: Partial<RecordingPolicyOptions> = {}): RecordedFix[] {
  const policy = new RecordingPolicy({ mode: 'path', ...options });
  return [...fixes.flatMap((f) => policy.offer(f)), ...policy.flush()];
}

/** A right-angle street corner at 50 km/h: 30 s north, a 3 s turn, 30 s east. */
const corner = (): Fix[] =>
  drive([
    ...repeat(30, { kmh: 50, heading: 0 }),
    { kmh: 45, heading: 30 },
    { kmh: 45, heading: 60 },
    { kmh: 45, heading: 90 },
    ...repeat(30, { kmh: 50, heading: 90 }),
  ]);

describe('RecordingPolicy (path, the default)', () => {
  it('is the default mode', () => {
    const fixes = corner();
    expect(recordPath(fixes)).toEqual([...fixes.flatMap((f) => policyDefault.offer(f)), ...policyDefault.flush()]);
  });
  const policyDefault = new RecordingPolicy();

  it('a straight road at constant speed records only the first fix and the 60 s heartbeats', () => {
    const fixes = drive(repeat(200, { kmh: 50, heading: 37 }));
    const rs = recordPath(fixes);
    expect(rs.map((r) => [(r.time - T0) / 1000, r.reason])).toEqual([
      [0, 'first'],
      [60, 'interval'],
      [120, 'interval'],
      [180, 'interval'],
      [199, 'last'],
    ]);
  });

  it('a 90-degree corner is recorded at the corner, and every epoch stays within the tolerance', () => {
    const fixes = corner();
    const rs = recordPath(fixes);
    const corners = rs.filter((r) => r.reason === 'path').map((r) => (r.time - T0) / 1000);
    expect(corners.length).toBeGreaterThanOrEqual(1);
    expect(corners.every((t) => t >= 28 && t <= 34)).toBe(true);
    expect(rs.length).toBeLessThanOrEqual(5);
    const f = trackFidelity(fixes, rs);
    expect(f.movingEpochs).toBe(fixes.length);
    expect(f.maxM).toBeLessThanOrEqual(10);
    // The measure is not vacuous: first and last alone cut the corner by about 150 m.
    expect(trackFidelity(fixes, [fixes[0]!, fixes.at(-1)!]).maxM).toBeGreaterThan(100);
  });

  it('a tighter tolerance spends more positions on the same bend', () => {
    const bend = drive(Array.from({ length: 120 }, (_, i) => ({ kmh: 60, heading: (i * 1.5) % 360 })));
    const loose = recordPath(bend, { pathToleranceM: 20 });
    const tight = recordPath(bend, { pathToleranceM: 3 });
    expect(tight.length).toBeGreaterThan(loose.length);
    expect(trackFidelity(bend, tight).maxM).toBeLessThanOrEqual(3);
    expect(trackFidelity(bend, loose).maxM).toBeLessThanOrEqual(20);
  });

  it('a stop of 30 s gets two positions at the stop, and the departure is exact', () => {
    const steps = [
      ...repeat(10, { kmh: 40, heading: 0 }),
      { kmh: 20, heading: 0 },
      { kmh: 2, heading: 0 },
      ...repeat(30, { kmh: 0, heading: 0, jitterM: 3 }),
      { kmh: 8, heading: 0 },
      ...repeat(10, { kmh: 30, heading: 0 }),
    ];
    const fixes = drive(steps);
    const rs = recordPath(fixes);
    const at = rs.map((r) => [(r.time - T0) / 1000, r.reason, r.transition ?? false]);
    expect(at).toContainEqual([11, 'stopped', true]);
    expect(at).toContainEqual([41, 'departure', true]);
    // Jitter at the standstill (Doppler speed 0) draws nothing else during the stop, and a stop
    // shorter than stopRepeatS (120 s) gets no third position.
    expect(rs.filter((r) => r.time > T0 + 11_000 && r.time < T0 + 41_000)).toHaveLength(0);
    const f = trackFidelity(fixes, rs);
    expect(f.stops).toBe(1);
    expect(f.stopsRepresented).toBe(1);
    expect(f.maxM).toBeLessThanOrEqual(10);
  });

  it('the departure is the last fix below the stopped speed, not the creep before moving off', () => {
    const steps = [
      ...repeat(10, { kmh: 40, heading: 0 }),
      { kmh: 2, heading: 0 },
      ...repeat(40, { kmh: 0, heading: 0 }),
      // Creeping forward at 4-5 km/h (moving for the fidelity measure, not yet for the policy).
      ...repeat(3, { kmh: 4.5, heading: 0 }),
      ...repeat(10, { kmh: 30, heading: 0 }),
    ];
    const fixes = drive(steps);
    const rs = recordPath(fixes);
    expect(rs.find((r) => r.reason === 'departure')?.time).toBe(T0 + 50_000);
    const f = trackFidelity(fixes, rs);
    expect(f.stops).toBe(1);
    expect(f.stopsRepresented).toBe(1);
    // Before, the departure was the last creeping fix: outside the stop, which then had one position.
    expect(
      trackFidelity(
        fixes,
        rs.filter((r) => r.reason !== 'departure'),
      ).stopsRepresented,
    ).toBe(0);
  });

  it('a stop that ends creeping just as stopRepeatS comes keeps its departure (no repeat on a creeping fix)', () => {
    const fixes = drive([
      ...repeat(10, { kmh: 40, heading: 0 }),
      { kmh: 2, heading: 0 },
      ...repeat(118, { kmh: 0, heading: 0 }),
      ...repeat(4, { kmh: 4.5, heading: 0 }),
      ...repeat(10, { kmh: 30, heading: 0 }),
    ]);
    const rs = recordPath(fixes);
    expect(rs.map((r) => r.reason)).not.toContain('stop');
    expect(rs.find((r) => r.reason === 'departure')?.time).toBe(T0 + 128_000);
    expect(trackFidelity(fixes, rs).stopsRepresented).toBe(1);
  });

  it('a stop that lasts gets one more position stopRepeatS in', () => {
    const fixes = drive([
      ...repeat(10, { kmh: 40, heading: 0 }),
      ...repeat(300, { kmh: 0, heading: 0 }),
      ...repeat(10, { kmh: 40, heading: 0 }),
    ]);
    const rs = recordPath(fixes);
    expect(rs.filter((r) => r.reason === 'stop').map((r) => (r.time - T0) / 1000)).toEqual([130]);
  });

  it('a short stop (traffic light) costs two events: arrival and departure', () => {
    const steps = [
      ...repeat(10, { kmh: 40, heading: 0 }),
      { kmh: 2, heading: 0 },
      ...repeat(8, { kmh: 0, heading: 0 }),
      ...repeat(5, { kmh: 30, heading: 0 }),
    ];
    const rs = recordPath(drive(steps));
    expect(rs.map((r) => r.reason)).toEqual(['first', 'stopped', 'departure', 'last']);
  });

  it('parked: two positions, then a heartbeat every 3600 s (the default); jitter with no Doppler speed draws nothing', () => {
    const fixes = drive(Array.from({ length: 2000 }, () => ({ kmh: 0, heading: 0, jitterM: 15 })));
    // The last (1999) is flush's at shutdown: where the vehicle stood when the agent stopped.
    expect(seconds(recordPath(fixes, { stoppedHeartbeatS: 1800 }))).toEqual([0, 120, 1920, 1999]);
    expect(seconds(recordPath(drive(Array.from({ length: 4000 }, () => ({ kmh: 0, heading: 0, jitterM: 15 })))))).toEqual([
      0, 120, 3720, 3999,
    ]);
    expect(seconds(recordPath(fixes, { stoppedHeartbeatS: 300, parkedHeartbeatS: 300 }))).toEqual([
      0, 120, 420, 720, 1020, 1320, 1620, 1920, 1999,
    ]);
  });

  it('parked for hours: the first heartbeat after stoppedHeartbeatS, then one every parkedHeartbeatS (10800 s, the default)', () => {
    const parked = drive(Array.from({ length: 26_000 }, () => ({ kmh: 0, heading: 0, jitterM: 15 })));
    expect(seconds(recordPath(parked))).toEqual([0, 120, 3720, 14_520, 25_320, 25_999]);
    expect(seconds(recordPath(parked.slice(0, 8000), { stoppedHeartbeatS: 1800, parkedHeartbeatS: 3600 }))).toEqual([
      0, 120, 1920, 5520, 7999,
    ]);
    // Moving off after hours parked is recorded at once, whatever the heartbeat.
    const rs = recordPath(drive([...Array.from({ length: 5000 }, () => ({ kmh: 0, heading: 0 })), ...repeat(20, { kmh: 40, heading: 0 })]));
    expect(rs.find((r) => r.reason === 'departure')?.time).toBe(T0 + 4999_000);
  });

  it('the longer parked heartbeat leaves every stop of 30 s or more with two positions or more', () => {
    for (const stopS of [30, 45, 300, 899, 901, 1900]) {
      const fixes = drive([
        ...repeat(20, { kmh: 40, heading: 0 }),
        ...repeat(stopS, { kmh: 0, heading: 0 }),
        ...repeat(20, { kmh: 40, heading: 0 }),
      ]);
      const atStop = recordPath(fixes).filter((r) => r.time >= T0 + 20_000 && r.time < T0 + (20 + stopS) * 1000);
      expect(atStop.length, `stop of ${stopS} s`).toBeGreaterThanOrEqual(2);
    }
  });

  it('a creep while stopped (3-6 km/h, not yet moving) is recorded once it strays past the tolerance', () => {
    const fixes = drive([...repeat(5, { kmh: 0, heading: 0 }), ...repeat(40, { kmh: 4.5, heading: 90 })]);
    const rs = recordPath(fixes);
    const creeps = rs.filter((r) => r.reason === 'creep');
    expect(creeps.length).toBeGreaterThanOrEqual(3);
    expect(trackFidelity(fixes, rs, { movingKmh: 3 }).maxM).toBeLessThanOrEqual(10);
  });

  it('a gap in the fixes (tunnel): the last fix before it is recorded', () => {
    const fixes = drive(repeat(200, { kmh: 50, heading: 0 }));
    const withGap = [...fixes.slice(0, 40), ...fixes.slice(140)];
    const rs = recordPath(withGap);
    expect(rs.map((r) => [(r.time - T0) / 1000, r.reason])).toContainEqual([39, 'gap']);
  });

  it('never records more than once a second, even at 10 Hz through tight turns', () => {
    const fixes = drive(repeat(100, { kmh: 50, heading: 0 })).map((f, i) => ({ ...f, time: T0 + i * 100, track: (i * 15) % 360 }));
    const zigzag = fixes.map((f, i) => ({ ...f, lon: f.lon! + (i % 2) * 0.0005 }));
    const rs = recordPath(zigzag);
    for (let i = 1; i < rs.length - 1; i++) expect((rs[i]?.time ?? 0) - (rs[i - 1]?.time ?? 0)).toBeGreaterThanOrEqual(1000);
    expect(rs.length).toBeGreaterThan(5);
  });

  it("flush records the window's last fix once, and nothing when there is none", () => {
    const policy = new RecordingPolicy({ mode: 'path' });
    const fixes = drive(repeat(20, { kmh: 50, heading: 0 }));
    fixes.forEach((f) => policy.offer(f));
    expect(policy.flush().map((r) => [(r.time - T0) / 1000, r.reason])).toEqual([[19, 'last']]);
    expect(policy.flush()).toEqual([]);
  });

  it('keeps the path on a synthetic drive (city, depot, highway) through decoder and gate, for a fifth of the adaptive events', () => {
    const drive = generateDrive({ minutes: 30, seed: 11 });
    const gate = new QualityGate({ releaseDateMs: Date.UTC(2020, 0, 1) });
    const fixes: Fix[] = [];
    const decoder = createDecoder({ onFix: (f) => void (gate.check(f) === undefined && fixes.push(f)) });
    decoder.pushChunk(Buffer.from(driveText(drive), 'latin1'));
    decoder.flush();
    expect(fixes.length).toBeGreaterThan(1400);
    const path = recordPath(fixes, {});
    const f = trackFidelity(fixes, path);
    expect(f.movingEpochs).toBeGreaterThan(1000);
    expect(f.maxM).toBeLessThanOrEqual(25);
    expect(f.p95M).toBeLessThanOrEqual(10);
    expect(f.within10m).toBeGreaterThanOrEqual(0.95);
    expect(f.stops).toBeGreaterThanOrEqual(1);
    expect(f.stopsRepresented).toBe(f.stops);
    const adaptive = record(fixes);
    expect(path.length * 5).toBeLessThan(adaptive.length);
  });
});
