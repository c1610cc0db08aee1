/**
 * Moving or stopped, with hysteresis: stopped below `stoppedSpeedKmh`, moving again only above
 * `movingSpeedKmh`, so a vehicle creeping at the threshold does not flap. The speed is the
 * receiver's Doppler speed over ground, or (GGA-only streams) the speed between the last two fixes.
 */
import type { Fix } from '../fix/fix.js';
import { distanceAndBearing } from './geodesy.js';

export type Motion = 'moving' | 'stopped';

export class MotionDetector {
  readonly #stoppedKmh: number;
  readonly #movingKmh: number;
  #motion: Motion | undefined;
  #previous: Fix | undefined;

  constructor(options: { stoppedSpeedKmh: number; movingSpeedKmh: number }) {
    this.#stoppedKmh = options.stoppedSpeedKmh;
    this.#movingKmh = options.movingSpeedKmh;
  }

  /** The state after this fix, and whether it changed with it (never on the first fix). */
  update(fix: Fix): { motion: Motion; changed: boolean; speedKmh: number | undefined } {
    const speedKmh = speedKmhOf(fix, this.#previous);
    this.#previous = fix;
    if (this.#motion === undefined) {
      this.#motion = speedKmh !== undefined && speedKmh > this.#movingKmh ? 'moving' : 'stopped';
      return { motion: this.#motion, changed: false, speedKmh };
    }
    let next: Motion = this.#motion;
    if (speedKmh !== undefined) {
      if (this.#motion === 'moving' && speedKmh < this.#stoppedKmh) next = 'stopped';
      else if (this.#motion === 'stopped' && speedKmh > this.#movingKmh) next = 'moving';
    }
    const changed = next !== this.#motion;
    this.#motion = next;
    return { motion: next, changed, speedKmh };
  }
}

/** The receiver's speed in km/h, or the speed from `previous` to `fix` when the receiver gives none. */
export function speedKmhOf(fix: Fix, previous: Fix | undefined): number | undefined {
  if (fix.speed !== undefined) return fix.speed * 3.6;
  const p = previous;
  if (p?.lat === undefined || p.lon === undefined || fix.lat === undefined || fix.lon === undefined || fix.time <= p.time) return undefined;
  return (distanceAndBearing(p.lat, p.lon, fix.lat, fix.lon).distance / ((fix.time - p.time) / 1000)) * 3.6;
}
