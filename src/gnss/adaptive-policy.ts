/**
 * The `adaptive` recording policy: records like a classic hardware tracker. While moving, a fix
 * when any trigger fires (time, distance, heading change, speed change), never more often than
 * `minIntervalS`; while stopped, only a heartbeat every `stoppedHeartbeatS` (`parkedHeartbeatS` once
 * parked), so position jitter at
 * a standstill never draws a track; and always a fix at the moving/stopped transitions (flagged
 * `transition`). Kept for fleets that want it; `path` (path-policy.ts) keeps a better track for a
 * tenth of the events.
 */
import type { Fix, RecordedFix } from '../fix/fix.js';
import { distanceAndBearing, headingDifference } from './geodesy.js';
import { SpeedHysteresis, type MovingOrStopped } from './speed-hysteresis.js';
import { heartbeatS } from './path-policy.js';

export interface AdaptivePolicyOptions {
  maxIntervalS: number;
  minDistanceM: number;
  minHeadingChangeDeg: number;
  minSpeedChangeKmh: number;
  minIntervalS: number;
  stoppedSpeedKmh: number;
  movingSpeedKmh: number;
  stoppedHeartbeatS: number;
  parkedHeartbeatS: number;
}

export class AdaptivePolicy {
  readonly #options: AdaptivePolicyOptions;
  readonly #hysteresis: SpeedHysteresis;
  #state: MovingOrStopped | undefined;
  /** GNSS time the vehicle was first seen stopped in the current stop, and where. */
  #stoppedSince: number | undefined;
  #stoppedWhere: { lat: number; lon: number } | undefined;
  #last: RecordedFix | undefined;
  /** A transition that came sooner than minIntervalS after the last record, recorded at the next chance. */
  #pendingTransition: MovingOrStopped | undefined;

  constructor(options: AdaptivePolicyOptions) {
    this.#options = options;
    this.#hysteresis = new SpeedHysteresis(options);
  }

  offer(fix: Fix): RecordedFix[] {
    const r = this.#offer(fix);
    return r ? [r] : [];
  }

  flush(): RecordedFix[] {
    return [];
  }

  #offer(fix: Fix): RecordedFix | undefined {
    const o = this.#options;
    const { state, changed, speedKmh } = this.#hysteresis.update(fix);
    this.#state = state;
    if (changed) this.#pendingTransition = state;
    this.#trackStop(fix, state);
    const last = this.#last;
    if (last === undefined) return this.#record(fix, 'first');
    const dt = (fix.time - last.time) / 1000;
    if (dt < o.minIntervalS) return undefined;
    if (this.#pendingTransition !== undefined) {
      const reason = this.#pendingTransition;
      this.#pendingTransition = undefined;
      return this.#record(fix, reason, true);
    }
    if (this.#state === 'stopped') return dt >= heartbeatS(o, this.#stoppedSince, last.time) ? this.#record(fix, 'heartbeat') : undefined;
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

  /**
   * When this stop began. A crawl below the moving speed (a jam) that has gone minDistanceM from
   * where it began starts the stop again: parked means not moving, so it keeps the hourly heartbeat.
   */
  #trackStop(fix: Fix, state: MovingOrStopped): void {
    if (state !== 'stopped') {
      this.#stoppedSince = undefined;
      this.#stoppedWhere = undefined;
      return;
    }
    const here = fix.lat !== undefined && fix.lon !== undefined ? { lat: fix.lat, lon: fix.lon } : undefined;
    const where = this.#stoppedWhere;
    const crawled = where && here && distanceAndBearing(where.lat, where.lon, here.lat, here.lon).distance >= this.#options.minDistanceM;
    if (this.#stoppedSince === undefined || crawled) {
      this.#stoppedSince = fix.time;
      this.#stoppedWhere = here;
    } else this.#stoppedWhere ??= here;
  }

  #record(fix: Fix, reason: string, transition = false): RecordedFix {
    const r: RecordedFix = transition ? { ...fix, transition: true, reason } : { ...fix, reason };
    this.#last = r;
    return r;
  }
}
