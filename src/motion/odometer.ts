import type { Fix } from '../fix/fix.js';
import { distanceAndBearing } from '../gnss/geodesy.js';
import { dopplerSpeed } from './doppler.js';
import { JUMP_TOLERANCE_M, MAX_PLAUSIBLE_MPS } from './position-jumps.js';

/**
 * Distance driven, from every accepted epoch (the quality gate's outliers and the impossible steps
 * of position-jumps.ts never come here).
 *
 * With a Doppler speed (RMC/VTG): the speed integrated over the time between epochs, counted only
 * at or above stillSpeedKmh. A receiver's Doppler speed is accurate to about 0.05 m/s and unbiased,
 * whereas summing the chords between 10 Hz positions adds their 1-2 m of noise to every 0.1 s step
 * (several % too long at urban speeds, and metres a minute standing still). Below stillSpeedKmh it
 * stands: its speed noise is not distance.
 * Without one (GGA only): chords of at least CHORD_M, so that the jitter of a standing receiver
 * (1-2 m) never adds up.
 * A gap in the epochs (a tunnel, a lost epoch, a receiver restart) longer than MAX_STEP_MS counts
 * the straight line across it only when the vehicle moved: both ends at speed, or farther apart
 * than standing jitter and multipath throw (GAP_STILL_M), and no farther than a vehicle can go in
 * the time. Never the speed times the gap. A restart is such a gap, from the edge the last run stored.
 */
export const CHORD_M = 10;
export const GAP_STILL_M = 30;
const MAX_STEP_MS = 2000;

/**
 * Where the odometer last counted, as the motion state stores it: a restart goes on from here, so
 * that what was driven between the last state written and the first fix after a cut is bridged by
 * the gap rule instead of lost. `mps`: the Doppler speed there, absent without one.
 */
export interface OdometerEdge {
  time: number;
  lat: number;
  lon: number;
  mps?: number;
}

export class Odometer {
  readonly #stillMps: number;
  #metres: number;
  #last: Fix | undefined;
  /** The last position counted without a Doppler speed. */
  #chordFrom: { lat: number; lon: number } | undefined;
  /** #last is a previous run's edge, not yet met by an epoch of this run. */
  #resumed = false;

  constructor(options: { stillSpeedKmh: number; startM?: number }) {
    this.#stillMps = options.stillSpeedKmh / 3.6;
    this.#metres = options.startM ?? 0;
  }

  /** Metres, fractional (whole metres go out in events). */
  get metres(): number {
    return this.#metres;
  }

  /** The installer's reading of the vehicle's own odometer (`odometer set`). */
  set(metres: number): void {
    this.#metres = metres;
  }

  /** The last epoch counted, to store with the odometer. */
  edge(): OdometerEdge | undefined {
    const last = this.#last;
    if (!last || last.lat === undefined || last.lon === undefined) return undefined;
    const mps = dopplerSpeed(last);
    return { time: last.time, lat: last.lat, lon: last.lon, ...(mps !== undefined ? { mps } : {}) };
  }

  /**
   * A previous run's edge: the first epoch of this run is met across a gap from it. A first epoch
   * not after it (the receiver's clock, or a store from another vehicle's time) starts afresh.
   */
  resumeFrom(edge: OdometerEdge): void {
    if (![edge.time, edge.lat, edge.lon].every(Number.isFinite)) return;
    this.#last = {
      time: edge.time,
      mode: 3,
      lat: edge.lat,
      lon: edge.lon,
      ...(edge.mps !== undefined ? { speed: edge.mps } : { speedDerived: true }),
    };
    this.#chordFrom = { lat: edge.lat, lon: edge.lon };
    this.#resumed = true;
  }

  /** No edge to go on from: the next epoch starts the count afresh. */
  forget(): void {
    this.#last = undefined;
    this.#chordFrom = undefined;
    this.#resumed = false;
  }

  /** The position moved without a path to count (a receiver that jumped for good): go on from here. */
  restartAt(fix: Fix): void {
    this.#last = fix;
    this.#chordFrom = fix.lat !== undefined && fix.lon !== undefined ? { lat: fix.lat, lon: fix.lon } : undefined;
  }

  offer(fix: Fix): void {
    if (fix.lat === undefined || fix.lon === undefined) return;
    const last = this.#last;
    const resumed = this.#resumed;
    this.#resumed = false;
    if (last && fix.time <= last.time) {
      if (resumed) this.restartAt(fix);
      return;
    }
    this.#last = fix;
    if (!last || last.lat === undefined || last.lon === undefined) return;
    const dt = fix.time - last.time;
    const here = { lat: fix.lat, lon: fix.lon };
    if (dt > MAX_STEP_MS) {
      const d = distanceAndBearing(last.lat, last.lon, fix.lat, fix.lon).distance;
      const atSpeed = (dopplerSpeed(last) ?? 0) >= this.#stillMps && (dopplerSpeed(fix) ?? 0) >= this.#stillMps;
      // Farther than any vehicle goes in the time (a wrong fix at either end) is no path.
      const plausible = d <= MAX_PLAUSIBLE_MPS * (dt / 1000) + JUMP_TOLERANCE_M;
      if (plausible && (atSpeed || d > GAP_STILL_M)) this.#metres += d;
      this.#chordFrom = here;
      return;
    }
    const s0 = dopplerSpeed(last);
    const s1 = dopplerSpeed(fix);
    if (s0 !== undefined && s1 !== undefined) {
      // Trapezoid over the step; a step where the vehicle stands on both ends counts nothing.
      const v0 = s0 >= this.#stillMps ? s0 : 0;
      const v1 = s1 >= this.#stillMps ? s1 : 0;
      this.#metres += ((v0 + v1) / 2) * (dt / 1000);
      this.#chordFrom = here;
      return;
    }
    this.#chordFrom ??= { lat: last.lat, lon: last.lon };
    const d = distanceAndBearing(this.#chordFrom.lat, this.#chordFrom.lon, fix.lat, fix.lon).distance;
    if (d >= CHORD_M) {
      this.#metres += d;
      this.#chordFrom = here;
    }
  }
}
