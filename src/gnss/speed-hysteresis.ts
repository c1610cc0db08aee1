/**
 * The recording policy's moving or stopped, a speed hysteresis: stopped below `stoppedSpeedKmh`,
 * moving again only above `movingSpeedKmh`, so a vehicle creeping at the threshold does not flap.
 * The speed is the receiver's Doppler speed over ground, or (GGA-only streams) the speed between
 * the last two fixes. Trips have their own detector (motion/movement.ts), which dates and places
 * stops and departures from every epoch.
 */
import type { Fix } from '../fix/fix.js';
import { distanceAndBearing } from './geodesy.js';

export type MovingOrStopped = 'moving' | 'stopped';

export class SpeedHysteresis {
  readonly #stoppedKmh: number;
  readonly #movingKmh: number;
  #state: MovingOrStopped | undefined;
  #previous: Fix | undefined;

  constructor(options: { stoppedSpeedKmh: number; movingSpeedKmh: number }) {
    this.#stoppedKmh = options.stoppedSpeedKmh;
    this.#movingKmh = options.movingSpeedKmh;
  }

  /** The state after this fix, and whether it changed with it (never on the first fix). */
  update(fix: Fix): { state: MovingOrStopped; changed: boolean; speedKmh: number | undefined } {
    const speedKmh = speedKmhOf(fix, this.#previous);
    this.#previous = fix;
    if (this.#state === undefined) {
      this.#state = speedKmh !== undefined && speedKmh > this.#movingKmh ? 'moving' : 'stopped';
      return { state: this.#state, changed: false, speedKmh };
    }
    let next: MovingOrStopped = this.#state;
    if (speedKmh !== undefined) {
      if (this.#state === 'moving' && speedKmh < this.#stoppedKmh) next = 'stopped';
      else if (this.#state === 'stopped' && speedKmh > this.#movingKmh) next = 'moving';
    }
    const changed = next !== this.#state;
    this.#state = next;
    return { state: next, changed, speedKmh };
  }
}

/** The receiver's speed in km/h, or the speed from `previous` to `fix` when the receiver gives none. */
export function speedKmhOf(fix: Fix, previous: Fix | undefined): number | undefined {
  if (fix.speed !== undefined) return fix.speed * 3.6;
  const p = previous;
  if (p?.lat === undefined || p.lon === undefined || fix.lat === undefined || fix.lon === undefined || fix.time <= p.time) return undefined;
  return (distanceAndBearing(p.lat, p.lon, fix.lat, fix.lon).distance / ((fix.time - p.time) / 1000)) * 3.6;
}
