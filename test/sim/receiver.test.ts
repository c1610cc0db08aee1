import { describe, expect, it } from 'vitest';
import { createDecoder } from '../../src/gnss/decoder.js';
import { distanceAndBearing } from '../../src/gnss/geodesy.js';
import type { Fix } from '../../src/fix/fix.js';
import { checksum, generateDrive, type SyntheticDrive } from '../../src/sim/receiver/index.js';

function decode(drive: SyntheticDrive): { fixes: Fix[]; dec: ReturnType<typeof createDecoder> } {
  const dec = createDecoder({ satellites: true });
  const fixes: Fix[] = [];
  for (const l of drive.lines) fixes.push(...dec.push(l));
  fixes.push(...dec.flush());
  return { fixes, dec };
}

describe('synthetic receiver', () => {
  const drive = generateDrive({ minutes: 10, seed: 7 });
  const { fixes, dec } = decode(drive);

  it('emits well-formed sentences with correct checksums', () => {
    for (const l of drive.lines) {
      const m = /^\$([^*]+)\*([0-9A-F]{2})$/.exec(l);
      expect(m, l).not.toBeNull();
      expect(m?.[2]).toBe(checksum(m?.[1] ?? ''));
      expect(l.length).toBeLessThanOrEqual(82);
    }
    const kinds = new Set(drive.lines.map((l) => l.slice(1, 6)));
    for (const k of ['GNRMC', 'GNGGA', 'GNGSA', 'GNVTG', 'GNZDA', 'GPGSV', 'GLGSV', 'GAGSV', 'GBGSV']) expect(kinds.has(k), k).toBe(true);
    expect(dec.counters.sentences.malformed).toBe(0);
    expect(dec.counters.sentences.rejected).toEqual({});
    expect(dec.counters.sentences.unknown).toBe(0);
  });

  it('decodes into one 3D fix per epoch, timed from the given GNSS start', () => {
    expect(fixes.length).toBe(drive.epochs);
    expect(fixes[0]?.time).toBe(drive.startTimeMs);
    expect(fixes.at(-1)?.time).toBe(drive.startTimeMs + (drive.epochs - 1) * 1000);
    expect(fixes.every((f) => f.mode === 3)).toBe(true);
    // Drive length lands close to the requested ten minutes.
    expect(drive.epochs).toBeGreaterThan(8 * 60);
    expect(drive.epochs).toBeLessThan(12 * 60);
  });

  it('reports four constellations in view with NMEA 4.11 system and signal ids', () => {
    const sats = dec.satellites();
    const by = new Set(sats.map((s) => s.constellation));
    expect([...by].sort()).toEqual(['BeiDou', 'GLONASS', 'GPS', 'Galileo']);
    expect(sats.find((s) => s.constellation === 'Galileo')?.signalId).toBe(7);
    expect(sats.some((s) => s.used)).toBe(true);
    const last = fixes.at(-1);
    expect(last?.satellitesUsed).toBe(sats.filter((s) => s.used).length);
  });

  it('follows the route: city with turns, a parked stop at the depot, then a highway at ~100 km/h', () => {
    const depot = drive.phases.find((p) => p.phase === 'depot');
    expect(depot).toBeDefined();
    const depotSeconds = (depot?.to ?? 0) - (depot?.from ?? 0);
    expect(depotSeconds).toBe(150);
    // Parked: speed ~0 and every position within a few metres of the first parked one.
    const parked = fixes.filter(
      (f) => f.time >= drive.startTimeMs + (depot?.from ?? 0) * 1000 && f.time < drive.startTimeMs + (depot?.to ?? 0) * 1000,
    );
    expect(parked.length).toBe(150);
    const p0 = parked[0];
    for (const f of parked) {
      expect((f.speed ?? 99) * 3.6).toBeLessThan(1);
      expect(distanceAndBearing(p0?.lat ?? 0, p0?.lon ?? 0, f.lat ?? 0, f.lon ?? 0).distance).toBeLessThan(10);
    }
    const jitter = Math.max(...parked.map((f) => distanceAndBearing(p0?.lat ?? 0, p0?.lon ?? 0, f.lat ?? 0, f.lon ?? 0).distance));
    expect(jitter).toBeGreaterThan(0.05);

    const highway = drive.phases.filter((p) => p.phase === 'highway');
    const hw = fixes.filter((f) =>
      highway.some((p) => f.time >= drive.startTimeMs + p.from * 1000 && f.time < drive.startTimeMs + p.to * 1000),
    );
    const fast = hw.filter((f) => (f.speed ?? 0) * 3.6 > 90);
    expect(fast.length / hw.length).toBeGreaterThan(0.6);
    expect(Math.max(...hw.map((f) => (f.speed ?? 0) * 3.6))).toBeLessThan(110);

    const city = fixes.filter((f, i) => drive.truth[i]?.phase === 'city');
    expect(Math.max(...city.map((f) => (f.speed ?? 0) * 3.6))).toBeLessThan(55);
    // Turns: the course changes by ~90 degrees several times in town.
    let turns = 0;
    for (let i = 10; i < drive.truth.length; i++) {
      const a = drive.truth[i - 10];
      const b = drive.truth[i];
      if (a?.phase === 'city' && b?.phase === 'city' && Math.abs(((b.heading - a.heading + 540) % 360) - 180) > 80) turns++;
    }
    expect(turns).toBeGreaterThan(3);

    // Decoded positions follow the true path within receiver noise.
    for (let i = 0; i < fixes.length; i += 17) {
      const f = fixes[i];
      const t = drive.truth[i];
      expect(distanceAndBearing(f?.lat ?? 0, f?.lon ?? 0, t?.lat ?? 0, t?.lon ?? 0).distance).toBeLessThan(8);
    }
    // Speed integrates to distance travelled: the route covers several kilometres.
    const km = fixes.reduce((s, f) => s + (f.speed ?? 0), 0) / 1000;
    expect(km).toBeGreaterThan(5);
  });

  it('is deterministic from the seed and differs between seeds', () => {
    expect(generateDrive({ minutes: 2, seed: 3 }).lines).toEqual(generateDrive({ minutes: 2, seed: 3 }).lines);
    expect(generateDrive({ minutes: 2, seed: 3 }).lines).not.toEqual(generateDrive({ minutes: 2, seed: 4 }).lines);
  });

  it('at 10 Hz: ten fixes a second, satellites once a second', () => {
    const fast = generateDrive({ minutes: 1, hz: 10, seed: 2 });
    const r = decode(fast);
    expect(r.fixes.length).toBe(fast.epochs);
    expect(r.fixes[1]?.time).toBe(fast.startTimeMs + 100);
    expect(r.dec.counters.epochs.late).toBe(0);
    const gsvPerSecond = fast.lines.filter((l) => l.startsWith('$GPGSV') && /^\$GPGSV,\d,1,/.test(l)).length;
    expect(gsvPerSecond).toBe(Math.ceil(fast.epochs / 10));
  });

  it('refuses out-of-range options', () => {
    expect(() => generateDrive({ hz: 20 })).toThrow(/hz/);
    expect(() => generateDrive({ minutes: 0 })).toThrow(/minutes/);
  });
});
