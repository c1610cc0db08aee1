import type { Fix } from '../fix/fix.js';
import { distanceAndBearing } from '../gnss/geodesy.js';

/**
 * Moving, stopped or unknown, from every accepted epoch (10 Hz on a good receiver), not the
 * recorded ones: the recording policy keeps about four fixes a minute, far too few to say when a
 * van stopped to the second.
 *
 * - A stop begins at the first still epoch (Doppler speed below stillSpeedKmh) and becomes one
 *   once the vehicle has not left it for stopAfterS: a red light (30-40 s) is not the end of a trip.
 *   It is dated at that first still epoch and placed at the mean of the epochs it stood for (the
 *   receiver's 1-2 m of jitter averages out over hundreds of epochs).
 * - Leaving is the hysteresis: farther than departRadiusM from where it stood, or departSpeedKmh
 *   held for departAfterS. Creeping in a queue (a few metres at walking pace, a few seconds at a
 *   time) does neither, and a standing receiver's jitter never comes near. A departure is dated
 *   at the start of the run of moving epochs that led to it (when the wheels began to turn).
 * - Unknown until the first stop or departure after a fresh start with no stored state: then no
 *   event, as nobody saw the vehicle stop or start.
 *
 * Receivers without a Doppler speed (GGA only): the speed over a window of at least 5 s of
 * positions, so that the jitter is divided by the window rather than by 0.1 s.
 */
export type MovementState = 'moving' | 'stopped' | 'unknown';

export interface MovementOptions {
  stopAfterS: number;
  stillSpeedKmh: number;
  departRadiusM: number;
  departSpeedKmh: number;
  departAfterS: number;
}

export const MOVEMENT_DEFAULTS: MovementOptions = {
  stopAfterS: 60,
  stillSpeedKmh: 3,
  departRadiusM: 50,
  departSpeedKmh: 10,
  departAfterS: 5,
};

export interface Place {
  lat: number;
  lon: number;
}

/** What the detector decided at this epoch: a stop (dated and placed where it stood) or a departure. */
export type MovementChange =
  | { kind: 'stop'; time: number; at: Place; silent: boolean }
  | { kind: 'start'; time: number; at: Place; silent: boolean };

/** What survives a restart: the state, since when (GNSS ms), and where it stands when stopped. */
export interface MovementSnapshot {
  state: MovementState;
  since?: number;
  at?: Place;
}

const DERIVED_SPEED_WINDOW_MS = 5000;

export class MovementDetector {
  readonly #o: MovementOptions;
  #state: MovementState = 'unknown';
  #since: number | undefined;
  /** Where the vehicle stands (stopped) or began to stand (a stop candidate), with the running mean. */
  #anchor: { time: number; first: Place; sumLat: number; sumLon: number; n: number } | undefined;
  /** The current run of moving epochs: when it began, where, and since when it is fast. */
  #run: { time: number; at: Place; fastSince: number | undefined } | undefined;
  /** Re-anchor at the first epoch after a restore (the vehicle may have been moved while off). */
  #restored = false;
  readonly #recent: { time: number; lat: number; lon: number }[] = [];

  constructor(options: Partial<MovementOptions> = {}) {
    this.#o = { ...MOVEMENT_DEFAULTS, ...options };
  }

  get state(): MovementState {
    return this.#state;
  }

  /** GNSS ms of the last change (undefined while unknown). */
  get since(): number | undefined {
    return this.#since;
  }

  snapshot(): MovementSnapshot {
    const s: MovementSnapshot = { state: this.#state };
    if (this.#since !== undefined) s.since = this.#since;
    if (this.#state === 'stopped' && this.#anchor) s.at = mean(this.#anchor);
    return s;
  }

  /** The state a previous run stored: a vehicle stopped then is still stopped, until it leaves. */
  restore(s: MovementSnapshot): void {
    this.#state = s.state;
    if (s.since !== undefined) this.#since = s.since;
    if (s.state === 'stopped' && s.at) {
      this.#anchor = { time: s.since ?? 0, first: s.at, sumLat: s.at.lat, sumLon: s.at.lon, n: 1 };
      this.#restored = true;
    }
  }

  /** One accepted epoch (the quality gate's outliers never come here). */
  offer(fix: Fix): MovementChange | undefined {
    if (fix.lat === undefined || fix.lon === undefined) return undefined;
    const at = { lat: fix.lat, lon: fix.lon };
    const kmh = this.#speedKmh(fix, at);
    if (kmh === undefined) return undefined;
    if (this.#restored) {
      this.#restored = false;
      // Standing after a restart: where it stands now is the stop, whatever the mean before.
      if (kmh < this.#o.stillSpeedKmh) this.#anchor = anchorAt(fix.time, at);
    }
    const still = kmh < this.#o.stillSpeedKmh;
    if (still) this.#run = undefined;
    else {
      this.#run ??= { time: fix.time, at, fastSince: undefined };
      if (kmh >= this.#o.departSpeedKmh) this.#run.fastSince ??= fix.time;
      else this.#run.fastSince = undefined;
    }

    if (this.#anchor && this.#left(fix.time, at)) {
      const run = this.#run ?? { time: fix.time, at };
      this.#anchor = undefined;
      if (this.#state === 'moving') return undefined; // a stop candidate that did not last
      const silent = this.#state === 'unknown';
      this.#state = 'moving';
      this.#since = run.time;
      return { kind: 'start', time: run.time, at: run.at, silent };
    }
    if (!this.#anchor) {
      if (still) this.#anchor = anchorAt(fix.time, at);
      else if (
        this.#state === 'unknown' &&
        this.#run?.fastSince !== undefined &&
        fix.time - this.#run.fastSince >= this.#o.departAfterS * 1000
      ) {
        // Seen driving after a fresh start: moving, but nobody saw it start.
        this.#state = 'moving';
        this.#since = this.#run.time;
        return { kind: 'start', time: this.#run.time, at: this.#run.at, silent: true };
      }
      return undefined;
    }
    if (still) add(this.#anchor, at);
    // It stood until now, or until the run of moving epochs in progress began (a departure being
    // confirmed does not make the stop it ends longer).
    const stoodUntil = this.#run ? this.#run.time : fix.time;
    if (this.#state !== 'stopped' && stoodUntil - this.#anchor.time >= this.#o.stopAfterS * 1000) {
      const silent = this.#state === 'unknown';
      this.#state = 'stopped';
      this.#since = this.#anchor.time;
      return { kind: 'stop', time: this.#anchor.time, at: mean(this.#anchor), silent };
    }
    return undefined;
  }

  /** Left the place it stands at: out of departRadiusM, or departSpeedKmh held for departAfterS. */
  #left(time: number, at: Place): boolean {
    const a = this.#anchor!;
    if (distanceAndBearing(a.first.lat, a.first.lon, at.lat, at.lon).distance > this.#o.departRadiusM) return true;
    const fastSince = this.#run?.fastSince;
    return fastSince !== undefined && time - fastSince >= this.#o.departAfterS * 1000;
  }

  /** The receiver's Doppler speed, or the speed over at least 5 s of positions when it gives none. */
  #speedKmh(fix: Fix, at: Place): number | undefined {
    if (fix.speed !== undefined) return fix.speed * 3.6;
    this.#recent.push({ time: fix.time, ...at });
    while (this.#recent.length > 2 && fix.time - this.#recent[1]!.time >= DERIVED_SPEED_WINDOW_MS) this.#recent.shift();
    const first = this.#recent[0]!;
    const dt = fix.time - first.time;
    if (dt < DERIVED_SPEED_WINDOW_MS) return undefined;
    return (distanceAndBearing(first.lat, first.lon, at.lat, at.lon).distance / (dt / 1000)) * 3.6;
  }
}

function anchorAt(time: number, at: Place): { time: number; first: Place; sumLat: number; sumLon: number; n: number } {
  return { time, first: at, sumLat: at.lat, sumLon: at.lon, n: 1 };
}

function add(a: { sumLat: number; sumLon: number; n: number }, at: Place): void {
  a.sumLat += at.lat;
  a.sumLon += at.lon;
  a.n++;
}

function mean(a: { sumLat: number; sumLon: number; n: number }): Place {
  return { lat: a.sumLat / a.n, lon: a.sumLon / a.n };
}
