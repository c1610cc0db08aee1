import type { Fix } from '../../src/fix/fix.js';
import { gga, rmc } from '../../src/sim/receiver/nmea-format.js';

/**
 * The test's own drive, at 10 Hz: legs of driving (accelerate at 2 m/s^2 to a cruise speed, cruise,
 * brake at 2 m/s^2 to a standstill) between standing spells, turning 90 degrees at each spell, with
 * a receiver's errors: a standing receiver's positions jitter 1-2 m epoch to epoch and its Doppler
 * speed reads up to ~1.4 km/h; a moving one's position error wanders slowly (about 1 m) and its
 * speed is off by ~0.05 m/s. Deterministic (seeded).
 */
export interface Spell {
  /** 'stand' for a standing spell, 'drive' for a leg. */
  kind: 'stand' | 'drive';
  seconds: number;
  label?: string;
  /** A leg's own top speed (m/s), e.g. creeping in a queue; default the drive's cruise speed. */
  topMps?: number;
  /** A standing spell turns the route 90 degrees after it (default true; false for a queue). */
  turn?: boolean;
}

export interface Drive {
  fixes: Fix[];
  /** The true distance driven, metres. */
  distanceM: number;
  /** Each standing spell: when the vehicle came to a standstill and moved off again (GNSS ms), and where. */
  stands: {
    label?: string;
    from: number;
    to: number;
    lat: number;
    lon: number;
    /** True distance driven before it. */ distanceM: number;
  }[];
}

export const T0 = Date.UTC(2026, 10, 23, 7, 30, 0);
const ACCEL = 2;
const LAT0 = 52.09;
const LON0 = 5.12;
const M_PER_DEG_LAT = 111_320;
const M_PER_DEG_LON = 111_320 * Math.cos((LAT0 * Math.PI) / 180);

/** The cruise speed that makes `legs` of the given seconds cover `distanceM` (trapezoids at ACCEL). */
export function cruiseFor(legSeconds: number[], distanceM: number): number {
  // Each leg covers v * (T - v / ACCEL): solve sum = distance for v (the smaller root).
  const n = legSeconds.length;
  const T = legSeconds.reduce((a, b) => a + b, 0);
  const a = n / ACCEL;
  return (T - Math.sqrt(T * T - 4 * a * distanceM)) / (2 * a);
}

export function makeDrive(spells: Spell[], cruiseMps: number, seed = 7): Drive {
  const random = mulberry32(seed);
  const gauss = (): number => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const fixes: Fix[] = [];
  const stands: Drive['stands'] = [];
  let x = 0;
  let y = 0;
  let heading = 0;
  let distanceM = 0;
  let t = T0;
  // The slowly wandering error of a moving receiver (first-order Gauss-Markov, ~1 m).
  let ex = 0;
  let ey = 0;
  for (const spell of spells) {
    const steps = Math.round(spell.seconds * 10);
    if (spell.kind === 'stand') {
      stands.push({ ...(spell.label ? { label: spell.label } : {}), from: t, to: t + steps * 100, ...toLatLon(x, y), distanceM });
      for (let i = 0; i < steps; i++) {
        const jitter = 1 + random(); // 1-2 m
        const angle = 2 * Math.PI * random();
        fixes.push(fix(t, x + jitter * Math.cos(angle), y + jitter * Math.sin(angle), Math.abs(gauss()) * 0.13, heading));
        t += 100;
      }
      if (spell.turn !== false) heading = (heading + 90) % 360;
      continue;
    }
    const T = spell.seconds;
    for (let i = 0; i < steps; i++) {
      const s = (i + 0.5) / 10;
      const v = Math.max(0, Math.min(spell.topMps ?? cruiseMps, ACCEL * s, ACCEL * (T - s)));
      const d = v * 0.1;
      distanceM += d;
      x += d * Math.sin((heading * Math.PI) / 180);
      y += d * Math.cos((heading * Math.PI) / 180);
      ex = 0.995 * ex + 0.1 * gauss();
      ey = 0.995 * ey + 0.1 * gauss();
      t += 100;
      fixes.push(fix(t, x + ex, y + ey, Math.max(0, v + 0.05 * gauss()), heading));
    }
  }
  return { fixes, distanceM, stands };
}

function fix(time: number, x: number, y: number, speed: number, track: number): Fix {
  return { time, mode: 3, ...toLatLon(x, y), speed, track, hdop: 0.9, satellitesUsed: 10 };
}

export function toLatLon(x: number, y: number): { lat: number; lon: number } {
  return { lat: LAT0 + y / M_PER_DEG_LAT, lon: LON0 + x / M_PER_DEG_LON };
}

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let r = Math.imul(a ^ (a >>> 15), 1 | a);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The drive of the figures: 480 s at 10 Hz, three red lights of 36-38 s, a 120 s depot stop, 3.7 km.
 * Five legs of 244 s in all; the cruise speed (about 68 km/h) is what makes them 3.7 km.
 */
export function urbanDrive(seed = 7): Drive {
  const legs = [70, 50, 40, 40, 44];
  const cruise = cruiseFor(legs, 3700);
  return makeDrive(
    [
      { kind: 'stand', seconds: 5, label: 'start' },
      { kind: 'drive', seconds: legs[0]! },
      { kind: 'stand', seconds: 37, label: 'light 1' },
      { kind: 'drive', seconds: legs[1]! },
      { kind: 'stand', seconds: 36, label: 'light 2' },
      { kind: 'drive', seconds: legs[2]! },
      { kind: 'stand', seconds: 120, label: 'depot' },
      { kind: 'drive', seconds: legs[3]! },
      { kind: 'stand', seconds: 38, label: 'light 3' },
      { kind: 'drive', seconds: legs[4]! },
    ],
    cruise,
    seed,
  );
}

/** The drive as a receiver's NMEA at 10 Hz (RMC with the Doppler speed, GGA), for a replay file. */
export function driveNmea(drive: Drive): string {
  const lines: string[] = [];
  for (const f of drive.fixes) {
    const facts = {
      timeMs: f.time,
      lat: f.lat!,
      lon: f.lon!,
      altMSL: 3,
      speedMps: f.speed ?? 0,
      track: f.track,
      hdop: f.hdop ?? 0.9,
      pdop: 1.5,
      vdop: 1.2,
      satellitesUsed: f.satellitesUsed ?? 10,
    };
    lines.push(rmc(facts), gga(facts));
  }
  return `${lines.join('\r\n')}\r\n`;
}
