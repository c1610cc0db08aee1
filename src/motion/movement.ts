import { CONFIG_DEFAULTS } from '../config/defaults.js';
import type { Fix } from '../fix/fix.js';
import { distanceAndBearing } from '../gnss/geodesy.js';
import { dopplerSpeed } from './doppler.js';

/**
 * Moving, stopped or unknown, from every accepted epoch (10 Hz on a good receiver), not the
 * recorded ones: the recording policy keeps about four fixes a minute, far too few to say when a
 * van stopped to the second. The rules, with their reasons, are in docs/trips.md.
 *
 * - A stop begins at the first still epoch (Doppler speed below stillSpeedKmh) and becomes one
 *   once the vehicle has not left it for stopAfterS: a red light (30-40 s) is not the end of a trip.
 *   It is dated at that first still epoch and placed at the mean of the epochs it stood for.
 * - Leaving is measured from that mean, and must be consistent: out of departRadiusM for
 *   DEPART_CONFIRM_MS and DEPART_CONFIRM_EPOCHS on end, or departSpeedKmh held for departAfterS. A
 *   single outlier, a second of multipath or a jump that comes back is none. A departure is dated
 *   at the start of the run of moving epochs that led to it (when the wheels began to turn).
 * - A loss of fix of at least stopAfterS (or an engine stop inside it) that began at walking speed
 *   or below is a stop dated at the last fix before it; a fix within departRadiusM after it goes on
 *   standing there, one farther away is a start too (the trip itself was not seen). A tunnel at
 *   speed is no stop. A restart is such a gap: the stored state says where and since when it stood.
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

/**
 * The configuration's defaults (config/defaults.ts: motion.*, and recording.stoppedSpeedKmh, the
 * same still as the recording policy's); the departure by speed is tuning, not configuration.
 */
export const MOVEMENT_DEFAULTS: MovementOptions = {
  stopAfterS: CONFIG_DEFAULTS.motion.stopAfterS,
  stillSpeedKmh: CONFIG_DEFAULTS.recording.stoppedSpeedKmh,
  departRadiusM: CONFIG_DEFAULTS.motion.departRadiusM,
  departSpeedKmh: 10,
  departAfterS: 5,
};

/** A vehicle that lost the fix at or below this speed may have parked in the gap (a car park's ramp). */
export const WALKING_KMH = 7;
/** Out of the radius this long, and for this many epochs, before it is a departure (multipath lasts about a second). */
export const DEPART_CONFIRM_MS = 2000;
export const DEPART_CONFIRM_EPOCHS = 3;

export interface Place {
  lat: number;
  lon: number;
}

/** What the detector decided at this epoch: a stop (dated and placed where it stood) or a departure. */
export type MovementChange =
  | { kind: 'stop'; time: number; at: Place; silent: boolean }
  | { kind: 'start'; time: number; at: Place; silent: boolean };

/**
 * What survives a restart: the state, since when (GNSS ms), where it stands when stopped, the stop
 * candidate and the moving run in progress (a cut before a stop or a start was confirmed), and the
 * last epoch seen (the edge of the gap a restart makes).
 */
export interface MovementSnapshot {
  state: MovementState;
  since?: number;
  at?: Place;
  candidate?: { since: number; at: Place };
  run?: { since: number; at: Place };
  last?: { time: number; at: Place; kmh?: number };
}

/** What the tracker knows beside the fixes: when the engine stopped, if it is off now. */
export interface MovementHints {
  engineOffSince?: number;
}

const DERIVED_SPEED_WINDOW_MS = 5000;

interface Anchor {
  time: number;
  sumLat: number;
  sumLon: number;
  n: number;
}

interface Run {
  time: number;
  at: Place;
  fastSince: number | undefined;
  /** The first epoch of the current spell out of the radius, and how many since. */
  outSince: number | undefined;
  outEpochs: number;
}

export class MovementDetector {
  readonly #options: MovementOptions;
  #state: MovementState = 'unknown';
  #since: number | undefined;
  /** Where the vehicle stands (stopped) or began to stand (a stop candidate), with the running mean. */
  #anchor: Anchor | undefined;
  /** The current run of moving epochs: when it began, where, since when it is fast and out of the radius. */
  #run: Run | undefined;
  /** The last epoch offered: the near edge of a gap. */
  #last: { time: number; at: Place; kmh?: number } | undefined;
  readonly #recent: { time: number; lat: number; lon: number }[] = [];

  constructor(options: Partial<MovementOptions> = {}) {
    this.#options = { ...MOVEMENT_DEFAULTS, ...options };
  }

  get state(): MovementState {
    return this.#state;
  }

  /** GNSS ms of the last change (undefined while unknown). */
  get since(): number | undefined {
    return this.#since;
  }

  /** GNSS ms since when it has been standing, while a stop is not confirmed yet. */
  get candidateSince(): number | undefined {
    return this.#state !== 'stopped' ? this.#anchor?.time : undefined;
  }

  snapshot(): MovementSnapshot {
    const s: MovementSnapshot = { state: this.#state };
    if (this.#since !== undefined) s.since = this.#since;
    if (this.#anchor) {
      if (this.#state === 'stopped') s.at = mean(this.#anchor);
      else s.candidate = { since: this.#anchor.time, at: mean(this.#anchor) };
    }
    if (this.#run && this.#state !== 'moving') s.run = { since: this.#run.time, at: this.#run.at };
    if (this.#last) s.last = { time: this.#last.time, at: this.#last.at, ...(this.#last.kmh !== undefined ? { kmh: this.#last.kmh } : {}) };
    return s;
  }

  /** The state a previous run stored: the first epoch after it is met as the far edge of a gap. */
  restore(s: MovementSnapshot): void {
    this.#state = s.state;
    if (s.since !== undefined) this.#since = s.since;
    if (s.state === 'stopped' && s.at) this.#anchor = anchorAt(s.since ?? s.last?.time ?? 0, s.at);
    else if (s.candidate) this.#anchor = anchorAt(s.candidate.since, s.candidate.at);
    if (s.run) this.#run = { time: s.run.since, at: s.run.at, fastSince: undefined, outSince: undefined, outEpochs: 0 };
    // Stores before the gap rule had no last epoch: the stop itself is the edge.
    this.#last = s.last ?? (this.#anchor && s.at ? { time: this.#anchor.time, at: s.at, kmh: 0 } : undefined);
  }

  /** One accepted epoch (the quality gate's outliers and impossible jumps never come here). */
  offer(fix: Fix, hints: MovementHints = {}): MovementChange[] {
    if (fix.lat === undefined || fix.lon === undefined) return [];
    const at = { lat: fix.lat, lon: fix.lon };
    const last = this.#last;
    if (last && fix.time <= last.time) return [];
    const changes: MovementChange[] = [];
    if (last && fix.time - last.time >= this.#options.stopAfterS * 1000) this.#acrossGap(last, fix.time, at, hints, changes);
    const kmh = this.#speedKmh(fix, at);
    this.#last = { time: fix.time, at, ...(kmh !== undefined ? { kmh } : {}) };
    if (kmh === undefined) return changes;
    const change = this.#epoch(fix.time, at, kmh);
    if (change) changes.push(change);
    return changes;
  }

  /**
   * The first epoch after a loss of fix (or a restart) of at least stopAfterS. Standing before it
   * (walking speed, a stop candidate, or an engine stop inside it) it was a stop from the last fix
   * on, or from the candidate's first still epoch; far away after it, a start too.
   */
  #acrossGap(last: { time: number; at: Place; kmh?: number }, time: number, at: Place, hints: MovementHints, out: MovementChange[]): void {
    this.#recent.length = 0;
    const anchor = this.#anchor;
    const from = anchor ? mean(anchor) : last.at;
    const far = distance(from, at) > this.#options.departRadiusM;
    if (this.#state === 'stopped') {
      if (!far) return;
      // A departure begun before the cut and stored is its true start; else it is first seen now.
      const run = this.#run;
      this.#run = undefined;
      out.push(this.#start(run ? run.time : time, run ? run.at : at));
      return;
    }
    const engineStopped = hints.engineOffSince !== undefined && hints.engineOffSince <= time;
    const slow = anchor !== undefined || (last.kmh ?? 0) <= WALKING_KMH || engineStopped;
    if (!slow) return; // a tunnel at speed
    const stoodFrom = anchor?.time ?? last.time;
    const silent = this.#state === 'unknown';
    this.#state = 'stopped';
    this.#since = stoodFrom;
    this.#anchor = anchorAt(stoodFrom, from);
    out.push({ kind: 'stop', time: stoodFrom, at: from, silent });
    if (far) {
      // A departure begun before the cut and stored is its true start; else it is first seen now.
      const run = this.#run;
      out.push(this.#start(run ? run.time : time, run ? run.at : at));
    }
    this.#run = undefined;
  }

  #start(time: number, at: Place): MovementChange {
    const silent = this.#state === 'unknown';
    this.#state = 'moving';
    this.#since = time;
    this.#anchor = undefined;
    return { kind: 'start', time, at, silent };
  }

  #epoch(time: number, at: Place, kmh: number): MovementChange | undefined {
    const still = kmh < this.#options.stillSpeedKmh;
    const anchor = this.#anchor;
    const out = anchor !== undefined && distance(mean(anchor), at) > this.#options.departRadiusM;
    if (still && !out) this.#run = undefined;
    else {
      this.#run ??= { time, at, fastSince: undefined, outSince: undefined, outEpochs: 0 };
      const run = this.#run;
      if (kmh >= this.#options.departSpeedKmh) run.fastSince ??= time;
      else run.fastSince = undefined;
      if (out) {
        run.outSince ??= time;
        run.outEpochs++;
      } else {
        run.outSince = undefined;
        run.outEpochs = 0;
      }
    }

    if (anchor && this.#left(time)) {
      const run = this.#run!;
      this.#run = undefined;
      if (this.#state === 'moving') {
        this.#anchor = undefined; // a stop candidate that did not last
        return undefined;
      }
      return this.#start(run.time, run.at);
    }
    if (!anchor) {
      if (still) this.#anchor = anchorAt(time, at);
      else if (
        this.#state === 'unknown' &&
        this.#run?.fastSince !== undefined &&
        time - this.#run.fastSince >= this.#options.departAfterS * 1000
      ) {
        // Seen driving after a fresh start: moving, but nobody saw it start.
        const run = this.#run;
        this.#run = undefined;
        return this.#start(run.time, run.at);
      }
      return undefined;
    }
    // The mean is of the epochs it stood for: an outlier out of the radius does not move it.
    if (still && !out) add(anchor, at);
    // It stood until now, or until the run of moving epochs in progress began (a departure being
    // confirmed does not make the stop it ends longer).
    const stoodUntil = this.#run ? this.#run.time : time;
    if (this.#state !== 'stopped' && stoodUntil - anchor.time >= this.#options.stopAfterS * 1000) {
      const silent = this.#state === 'unknown';
      this.#state = 'stopped';
      this.#since = anchor.time;
      return { kind: 'stop', time: anchor.time, at: mean(anchor), silent };
    }
    return undefined;
  }

  /** Left the place it stands at: out of departRadiusM consistently, or departSpeedKmh held for departAfterS. */
  #left(time: number): boolean {
    const run = this.#run;
    if (!run) return false;
    if (run.outSince !== undefined && run.outEpochs >= DEPART_CONFIRM_EPOCHS && time - run.outSince >= DEPART_CONFIRM_MS) return true;
    return run.fastSince !== undefined && time - run.fastSince >= this.#options.departAfterS * 1000;
  }

  /** The receiver's Doppler speed, or the speed over at least 5 s of positions when it gives none. */
  #speedKmh(fix: Fix, at: Place): number | undefined {
    const doppler = dopplerSpeed(fix);
    if (doppler !== undefined) return doppler * 3.6;
    this.#recent.push({ time: fix.time, ...at });
    while (this.#recent.length > 2 && fix.time - this.#recent[1]!.time >= DERIVED_SPEED_WINDOW_MS) this.#recent.shift();
    const first = this.#recent[0]!;
    const dt = fix.time - first.time;
    if (dt < DERIVED_SPEED_WINDOW_MS) return undefined;
    return (distance(first, at) / (dt / 1000)) * 3.6;
  }
}

function distance(a: Place, b: Place): number {
  return distanceAndBearing(a.lat, a.lon, b.lat, b.lon).distance;
}

function anchorAt(time: number, at: Place): Anchor {
  return { time, sumLat: at.lat, sumLon: at.lon, n: 1 };
}

function add(a: Anchor, at: Place): void {
  a.sumLat += at.lat;
  a.sumLon += at.lon;
  a.n++;
}

function mean(a: Anchor): Place {
  return { lat: a.sumLat / a.n, lon: a.sumLon / a.n };
}
