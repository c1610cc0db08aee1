import { describe, expect, it } from 'vitest';
import { distanceAndBearing } from '../../src/gnss/geodesy.js';
import { MovementDetector, type MovementChange } from '../../src/motion/movement.js';
import { Odometer } from '../../src/motion/odometer.js';
import { makeDrive, urbanDrive, type Drive } from './drive.js';

function run(drive: Drive, detector = new MovementDetector()): MovementChange[] {
  const changes: MovementChange[] = [];
  for (const f of drive.fixes) changes.push(...detector.offer(f));
  return changes;
}

const metresBetween = (a: { lat: number; lon: number }, b: { lat: number; lon: number }): number =>
  distanceAndBearing(a.lat, a.lon, b.lat, b.lon).distance;

describe('movement from the full-rate fixes', () => {
  it('the 480 s drive: one stop and one start at the depot, within 5 s and 25 m of the truth; none at the three red lights', () => {
    const drive = urbanDrive();
    expect(drive.fixes).toHaveLength(4800);
    expect(drive.distanceM).toBeCloseTo(3700, -1);
    const events = run(drive).filter((c) => !c.silent);
    const depot = drive.stands.find((s) => s.label === 'depot')!;
    expect(events.map((e) => e.kind)).toEqual(['stop', 'start']);
    const [stop, start] = events as [MovementChange, MovementChange];
    process.stderr.write(
      `480 s drive: stop ${(stop.time - depot.from) / 1000} s / ${metresBetween(stop.at, depot).toFixed(1)} m from the truth, start ${(start.time - depot.to) / 1000} s / ${metresBetween(start.at, depot).toFixed(1)} m\n`,
    );
    expect(Math.abs(stop.time - depot.from)).toBeLessThanOrEqual(5000);
    expect(metresBetween(stop.at, depot)).toBeLessThanOrEqual(25);
    expect(Math.abs(start.time - depot.to)).toBeLessThanOrEqual(5000);
    expect(metresBetween(start.at, depot)).toBeLessThanOrEqual(25);
  });

  it('the same with every seed tried: never an event at a red light, never a second stop', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const events = run(urbanDrive(seed)).filter((c) => !c.silent);
      expect(
        events.map((e) => e.kind),
        `seed ${seed}`,
      ).toEqual(['stop', 'start']);
    }
  });

  it('a standing receiver jittering 1-2 m at 10 Hz for an hour stays stopped', () => {
    const drive = makeDrive(
      [
        { kind: 'drive', seconds: 30 },
        { kind: 'stand', seconds: 3600 },
      ],
      14,
    );
    const detector = new MovementDetector();
    const events = run(drive, detector);
    expect(events.map((e) => [e.kind, e.silent])).toEqual([
      ['start', true],
      ['stop', false],
    ]);
    expect(detector.state).toBe('stopped');
  });

  it('creeping in a queue after a stop is no departure; the drive after it is one, dated when it began', () => {
    const queue = Array.from({ length: 8 }, () => [
      { kind: 'drive' as const, seconds: 4, topMps: 1.5 },
      { kind: 'stand' as const, seconds: 12, turn: false },
    ]).flat();
    const drive = makeDrive(
      [
        { kind: 'drive', seconds: 30 },
        { kind: 'stand', seconds: 90, label: 'queue', turn: false },
        ...queue,
        { kind: 'drive', seconds: 40 },
      ],
      14,
    );
    const events = run(drive).filter((c) => !c.silent);
    expect(events.map((e) => e.kind)).toEqual(['stop', 'start']);
    const lastStand = drive.stands.at(-1)!;
    expect(Math.abs(events[1]!.time - lastStand.to)).toBeLessThanOrEqual(1000);
  });

  it('a stop and a start need no Doppler speed (GGA only): positions over 5 s', () => {
    const drive = urbanDrive();
    for (const f of drive.fixes) delete f.speed;
    const events = run(drive).filter((c) => !c.silent);
    const depot = drive.stands.find((s) => s.label === 'depot')!;
    expect(events.map((e) => e.kind)).toEqual(['stop', 'start']);
    expect(Math.abs(events[0]!.time - depot.from)).toBeLessThanOrEqual(10_000);
  });

  it('restored stopped after a restart: the jitter makes no start, leaving does', () => {
    const drive = makeDrive(
      [
        { kind: 'stand', seconds: 300 },
        { kind: 'drive', seconds: 30 },
      ],
      14,
    );
    const detector = new MovementDetector();
    detector.restore({ state: 'stopped', since: drive.fixes[0]!.time - 600_000, at: drive.stands[0]! });
    const events = run(drive, detector);
    expect(events.map((e) => [e.kind, e.silent])).toEqual([['start', false]]);
    expect(Math.abs(events[0]!.time - drive.stands[0]!.to)).toBeLessThanOrEqual(1000);
  });
});

describe('odometer from the full-rate fixes', () => {
  it('within 2 % of the true distance on the 480 s drive, with the Doppler speed and without', () => {
    for (const doppler of [true, false]) {
      const drive = urbanDrive();
      if (!doppler) for (const f of drive.fixes) delete f.speed;
      const odometer = new Odometer({ stillSpeedKmh: 3 });
      for (const f of drive.fixes) odometer.offer(f);
      const error = odometer.metres / drive.distanceM - 1;
      process.stderr.write(
        `odometer (${doppler ? 'Doppler' : 'GGA only'}): ${odometer.metres.toFixed(1)} m for ${drive.distanceM.toFixed(1)} m (${(error * 100).toFixed(2)} %)\n`,
      );
      expect(Math.abs(error)).toBeLessThanOrEqual(0.02);
    }
  });

  it('an hour standing with 1-2 m of jitter adds less than 5 m', () => {
    const drive = makeDrive([{ kind: 'stand', seconds: 3600 }], 14);
    for (const doppler of [true, false]) {
      const odometer = new Odometer({ stillSpeedKmh: 3 });
      for (const f of drive.fixes) odometer.offer(doppler ? f : { ...f, speed: undefined });
      expect(odometer.metres, doppler ? 'Doppler' : 'GGA only').toBeLessThan(5);
    }
  });

  it('a gap counts the straight line across it', () => {
    const odometer = new Odometer({ stillSpeedKmh: 3 });
    const a = { time: 0, mode: 3 as const, lat: 52, lon: 5, speed: 10 };
    odometer.offer(a);
    odometer.offer({ ...a, time: 60_000, lat: 52.001 });
    expect(odometer.metres).toBeCloseTo(111.25, 0);
  });
});
