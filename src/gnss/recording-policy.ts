/**
 * Stage 6: which fixes are recorded. Defaults are the config schema's (`recording.*`).
 *
 * - `path` (default, path-policy.ts): positions where the path bends, so that the track the platform
 *   interpolates between delivered positions stays within `pathToleranceM` of the receiver's, a
 *   `maxIntervalS` heartbeat while moving, and several positions at every stop.
 * - `adaptive` (adaptive-policy.ts): the rules of a classic hardware tracker (time, distance, heading
 *   change, speed change). About ten times the events of `path` for a track no better where it matters.
 * - `all`: every fix that passed the quality gate.
 */
import { AdaptivePolicy } from './adaptive-policy.js';
import type { Fix, RecordedFix } from '../fix/fix.js';
import { PathPolicy } from './path-policy.js';
import { schemaDefaults } from '../config/schema.js';

export type RecordingMode = 'path' | 'adaptive' | 'all';

export interface RecordingPolicyOptions {
  mode: RecordingMode;
  /** path: largest deviation of the delivered track from the receiver's while moving, metres. */
  pathToleranceM: number;
  /** path and adaptive: while moving, record at least this often. */
  maxIntervalS: number;
  /** adaptive only. */
  minDistanceM: number;
  /** adaptive only. */
  minHeadingChangeDeg: number;
  /** adaptive only. */
  minSpeedChangeKmh: number;
  minIntervalS: number;
  stoppedSpeedKmh: number;
  movingSpeedKmh: number;
  /** path: the second position at a stop, this long after the first. */
  stopRepeatS: number;
  stoppedHeartbeatS: number;
  /** Stopped for longer than stoppedHeartbeatS (parked): the heartbeats after the first, at least stoppedHeartbeatS. */
  parkedHeartbeatS: number;
  /** path: 0 decides each position as it comes; more chooses positions up to this many seconds late. */
  maxDelayS: number;
  /** path, deciding late: no moving epoch further than this from the delivered track, metres. */
  pathMaxDeviationM: number;
}

/** The schema's `recording.*` defaults (written once, in src/config/defaults.ts). */
export function recordingDefaults(): RecordingPolicyOptions {
  return schemaDefaults().recording;
}

interface Policy {
  offer(fix: Fix): RecordedFix[];
  flush(): RecordedFix[];
}

export class RecordingPolicy {
  readonly #policy: Policy;

  constructor(options: Partial<RecordingPolicyOptions> = {}) {
    const o = { ...recordingDefaults(), ...options };
    this.#policy = o.mode === 'path' ? new PathPolicy(o) : o.mode === 'adaptive' ? new AdaptivePolicy(o) : new RecordAll();
  }

  /**
   * The fixes to record now for this one (which passed the quality gate), oldest first: none, this
   * one, or (path) earlier fixes whose need only this one showed.
   */
  offer(fix: Fix): RecordedFix[] {
    return this.#policy.offer(fix);
  }

  /** At shutdown: what the policy still holds back and should be recorded. */
  flush(): RecordedFix[] {
    return this.#policy.flush();
  }
}

class RecordAll implements Policy {
  offer(fix: Fix): RecordedFix[] {
    return [{ ...fix, reason: 'all' }];
  }

  flush(): RecordedFix[] {
    return [];
  }
}
