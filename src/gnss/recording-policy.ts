/**
 * Stage 6: which fixes are recorded. `all` keeps every fix that passed the gate. `adaptive` records
 * like a good hardware tracker: while moving, a fix when any trigger fires (time, distance, heading
 * change, speed change), never more often than `minIntervalS`; while stopped, only a heartbeat
 * every `stoppedHeartbeatS`, so position jitter at a standstill never draws a track; and always a
 * fix at the moving/stopped transitions (flagged `transition`). Defaults are the config schema's
 * (`recording.*`).
 */
import type { Fix, RecordedFix } from './fix.js';
import { distanceAndBearing, headingDifference } from './geodesy.js';

export interface RecordingPolicyOptions {
  mode: 'adaptive' | 'all';
  maxIntervalS: number;
  minDistanceM: number;
  minHeadingChangeDeg: number;
  minSpeedChangeKmh: number;
  minIntervalS: number;
  stoppedSpeedKmh: number;
  movingSpeedKmh: number;
  stoppedHeartbeatS: number;
}

export const RECORDING_DEFAULTS: RecordingPolicyOptions = {
  mode: 'adaptive',
  maxIntervalS: 30,
  minDistanceM: 100,
  minHeadingChangeDeg: 10,
  minSpeedChangeKmh: 10,
  minIntervalS: 1,
  stoppedSpeedKmh: 3,
  movingSpeedKmh: 6,
  stoppedHeartbeatS: 300,
};

type Motion = 'moving' | 'stopped';

export class RecordingPolicy {
  readonly #o: RecordingPolicyOptions;
  #motion: Motion | undefined;
  #last: RecordedFix | undefined;
  #previous: Fix | undefined;
  /** A transition that came sooner than minIntervalS after the last record, recorded at the next chance. */
  #pendingTransition: Motion | undefined;

  constructor(options: Partial<RecordingPolicyOptions> = {}) {
    this.#o = { ...RECORDING_DEFAULTS, ...options };
  }

  /** The fix to record for this one (which passed the quality gate), or undefined. */
  offer(fix: Fix): RecordedFix | undefined {
    const speedKmh = this.#speedKmh(fix);
    this.#previous = fix;
    if (this.#o.mode === 'all') return this.#record(fix, 'all');
    const o = this.#o;
    // Hysteresis: stopped below stoppedSpeedKmh, moving again only above movingSpeedKmh.
    let transition: Motion | undefined;
    if (this.#motion === undefined) this.#motion = speedKmh !== undefined && speedKmh > o.movingSpeedKmh ? 'moving' : 'stopped';
    else if (speedKmh !== undefined) {
      if (this.#motion === 'moving' && speedKmh < o.stoppedSpeedKmh) transition = 'stopped';
      else if (this.#motion === 'stopped' && speedKmh > o.movingSpeedKmh) transition = 'moving';
    }
    if (transition !== undefined) {
      this.#motion = transition;
      this.#pendingTransition = transition;
    }
    const last = this.#last;
    if (last === undefined) return this.#record(fix, 'first');
    const dt = (fix.time - last.time) / 1000;
    if (dt < o.minIntervalS) return undefined;
    if (this.#pendingTransition !== undefined) {
      const reason = this.#pendingTransition;
      this.#pendingTransition = undefined;
      return this.#record(fix, reason, true);
    }
    if (this.#motion === 'stopped') return dt >= o.stoppedHeartbeatS ? this.#record(fix, 'heartbeat') : undefined;
    if (dt >= o.maxIntervalS) return this.#record(fix, 'interval');
    if (fix.lat !== undefined && fix.lon !== undefined && last.lat !== undefined && last.lon !== undefined) {
      if (distanceAndBearing(last.lat, last.lon, fix.lat, fix.lon).distance >= o.minDistanceM) return this.#record(fix, 'distance');
    }
    if (fix.track !== undefined && last.track !== undefined && headingDifference(fix.track, last.track) >= o.minHeadingChangeDeg)
      return this.#record(fix, 'heading');
    const lastKmh = last.speed === undefined ? undefined : last.speed * 3.6;
    if (speedKmh !== undefined && lastKmh !== undefined && Math.abs(speedKmh - lastKmh) >= o.minSpeedChangeKmh)
      return this.#record(fix, 'speed');
    return undefined;
  }

  /** The receiver's speed, or (GGA-only streams) the speed between the last two fixes. */
  #speedKmh(fix: Fix): number | undefined {
    if (fix.speed !== undefined) return fix.speed * 3.6;
    const p = this.#previous;
    if (p?.lat === undefined || p.lon === undefined || fix.lat === undefined || fix.lon === undefined || fix.time <= p.time)
      return undefined;
    return (distanceAndBearing(p.lat, p.lon, fix.lat, fix.lon).distance / ((fix.time - p.time) / 1000)) * 3.6;
  }

  #record(fix: Fix, reason: string, transition = false): RecordedFix {
    const r: RecordedFix = transition ? { ...fix, transition: true, reason } : { ...fix, reason };
    this.#last = r;
    return r;
  }
}
