/**
 * How well a recorded track keeps the receiver's path, measured against the goal (docs/decisions/recording-policy.md): the
 * delivered positions, linearly interpolated in time, against every full-rate fix while moving
 * (largest deviation, 95th percentile, share within 10 m), and every stop of 30 s or more
 * represented by at least two delivered positions during it. Used by `bench:policy` and the tests.
 */
import type { Fix } from '../fix/fix.js';
import { distanceAndBearing } from './geodesy.js';
import { speedKmhOf } from './speed-hysteresis.js';

export interface FidelityOptions {
  /** A fix at or above this speed is "moving" (default 3 km/h, the default stopped threshold). */
  movingKmh?: number;
  /** Stops at least this long must be represented (default 30 s). */
  minStopS?: number;
  /** By at least this many positions (default 2). */
  minStopPositions?: number;
}

export interface Fidelity {
  /** Moving epochs measured (between the first and the last delivered position). */
  movingEpochs: number;
  maxM: number;
  p95M: number;
  /** Share of moving epochs within 10 m, 0..1. */
  within10m: number;
  /** Stops of minStopS or more, and how many of them got minStopPositions delivered positions. */
  stops: number;
  stopsRepresented: number;
  /** Seconds from the first to the last fix of the full-rate track. */
  durationS: number;
  /** Seconds of it spent moving (sum of the gaps after moving fixes, each at most 10 s). */
  movingS: number;
}

/** `full` and `delivered` in time order; delivered fixes are a subset of `full` (same fixes, maybe later). */
export function trackFidelity(full: readonly Fix[], delivered: readonly Fix[], options: FidelityOptions = {}): Fidelity {
  const movingKmh = options.movingKmh ?? 3;
  const minStopMs = (options.minStopS ?? 30) * 1000;
  const minPositions = options.minStopPositions ?? 2;
  const times = delivered.map((d) => d.time);
  const deviations: number[] = [];
  let movingS = 0;
  let stops = 0;
  let stopsRepresented = 0;
  let stopStart: Fix | undefined;
  let stopEnd: Fix | undefined;
  const closeStop = (): void => {
    if (stopStart && stopEnd && stopEnd.time - stopStart.time >= minStopMs) {
      stops++;
      const inside = countBetween(times, stopStart.time, stopEnd.time);
      if (inside >= minPositions) stopsRepresented++;
    }
    stopStart = stopEnd = undefined;
  };
  let j = 0;
  for (let i = 0; i < full.length; i++) {
    const f = full[i]!;
    const speed = speedKmhOf(f, full[i - 1]);
    const moving = speed !== undefined && speed >= movingKmh;
    if (!moving) {
      stopStart ??= f;
      stopEnd = f;
      continue;
    }
    closeStop();
    const next = full[i + 1];
    if (next) movingS += Math.min(10, (next.time - f.time) / 1000);
    while (j + 1 < delivered.length && delivered[j + 1]!.time <= f.time) j++;
    const a = delivered[j];
    const b = delivered[j + 1];
    if (!a || a.time > f.time) continue; // before the first delivered position
    if (a.time === f.time) {
      deviations.push(distance(a, f));
      continue;
    }
    if (!b) continue; // after the last delivered position
    const u = (f.time - a.time) / (b.time - a.time);
    const lat = a.lat! + (b.lat! - a.lat!) * u;
    const lon = a.lon! + (b.lon! - a.lon!) * u;
    deviations.push(distanceAndBearing(lat, lon, f.lat!, f.lon!).distance);
  }
  closeStop();
  deviations.sort((x, y) => x - y);
  const n = deviations.length;
  return {
    movingEpochs: n,
    maxM: n === 0 ? 0 : deviations[n - 1]!,
    p95M: n === 0 ? 0 : deviations[Math.min(n - 1, Math.ceil(0.95 * n) - 1)]!,
    within10m: n === 0 ? 1 : deviations.filter((d) => d <= 10).length / n,
    stops,
    stopsRepresented,
    durationS: full.length < 2 ? 0 : (full[full.length - 1]!.time - full[0]!.time) / 1000,
    movingS,
  };
}

function distance(a: Fix, b: Fix): number {
  return distanceAndBearing(a.lat!, a.lon!, b.lat!, b.lon!).distance;
}

/** How many of the sorted `times` lie in [from, to]. */
function countBetween(times: readonly number[], from: number, to: number): number {
  let n = 0;
  for (const t of times) if (t >= from && t <= to) n++;
  return n;
}
