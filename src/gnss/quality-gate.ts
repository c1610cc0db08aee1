/**
 * Stage 5: the quality gate. A fix passes when it is a real, plausible fix; each rejection reason
 * has its own counter. Defaults are the config schema's (`quality.*`).
 */
import type { Fix } from '../fix/fix.js';
import { distanceAndBearing } from './geodesy.js';
import { earliestValidTime } from './rollover.js';
import { schemaDefaults } from '../config/schema.js';

export interface QualityGateOptions {
  /** Lowest fix mode accepted (2 = 2D, 3 = 3D). */
  minMode: 2 | 3;
  maxHdop: number;
  /** A jump from the last accepted fix implying more than this speed is rejected. */
  maxSpeedKmh: number;
  /** Dates more than this many days before the release date are rejected (after rollover correction). */
  minDateMarginDays: number;
  /** Default: the build's release date (src/version.ts). */
  releaseDateMs?: number;
}

/** The schema's `quality.*` defaults (written once, in src/config/defaults.ts). */
export function qualityDefaults(): QualityGateOptions {
  return schemaDefaults().quality;
}

export type RejectionReason =
  | 'noFix'
  | 'modeTooLow'
  | 'noPosition'
  | 'outOfRange'
  | 'nullIsland'
  | 'hdopTooHigh'
  | 'dateTooOld'
  | 'timeBackwards'
  | 'timeRepeated'
  | 'impossibleJump';

export interface QualityCounters {
  accepted: number;
  rejected: Record<RejectionReason, number>;
  /** Accepted after a run of mutually consistent fixes that all jumped from the last accepted one. */
  reanchored: number;
}

/**
 * After this many consecutive fixes that agree with each other but not with the last accepted
 * one, that one was the outlier: start again from the new positions instead of rejecting forever.
 */
const REANCHOR_AFTER = 5;

export class QualityGate {
  readonly counters: QualityCounters = {
    accepted: 0,
    rejected: {
      noFix: 0,
      modeTooLow: 0,
      noPosition: 0,
      outOfRange: 0,
      nullIsland: 0,
      hdopTooHigh: 0,
      dateTooOld: 0,
      timeBackwards: 0,
      timeRepeated: 0,
      impossibleJump: 0,
    },
    reanchored: 0,
  };
  readonly #options: QualityGateOptions;
  readonly #earliest: number;
  #last: Fix | undefined;
  #candidate: Fix | undefined;
  #candidateRun = 0;

  constructor(options: Partial<QualityGateOptions> = {}) {
    this.#options = { ...qualityDefaults(), ...options };
    this.#earliest = earliestValidTime(this.#options);
  }

  /** Undefined when the fix passes (and becomes the reference for the next one), else the reason. */
  check(fix: Fix): RejectionReason | undefined {
    const reason = this.#reason(fix);
    if (reason === undefined) {
      this.counters.accepted++;
      this.#last = fix;
      this.#candidate = undefined;
      this.#candidateRun = 0;
    } else {
      this.counters.rejected[reason]++;
    }
    return reason;
  }

  #reason(fix: Fix): RejectionReason | undefined {
    if (fix.mode < 2) return 'noFix';
    if (fix.mode < this.#options.minMode) return 'modeTooLow';
    const { lat, lon } = fix;
    if (lat === undefined || lon === undefined) return 'noPosition';
    if (!(Math.abs(lat) <= 90 && Math.abs(lon) <= 180)) return 'outOfRange';
    if (lat === 0 && lon === 0) return 'nullIsland';
    if (fix.hdop !== undefined && fix.hdop > this.#options.maxHdop) return 'hdopTooHigh';
    if (!Number.isFinite(fix.time) || fix.time < this.#earliest) return 'dateTooOld';
    const last = this.#last;
    if (last === undefined) return undefined;
    if (fix.time === last.time) return 'timeRepeated';
    if (fix.time < last.time) return 'timeBackwards';
    if (this.#plausible(last, fix)) return undefined;
    const candidate = this.#candidate;
    this.#candidateRun =
      candidate !== undefined && fix.time > candidate.time && this.#plausible(candidate, fix) ? this.#candidateRun + 1 : 1;
    this.#candidate = fix;
    if (this.#candidateRun >= REANCHOR_AFTER) {
      this.counters.reanchored++;
      return undefined;
    }
    return 'impossibleJump';
  }

  #plausible(from: Fix, to: Fix): boolean {
    const dt = (to.time - from.time) / 1000;
    const d = distanceAndBearing(from.lat ?? 0, from.lon ?? 0, to.lat ?? 0, to.lon ?? 0).distance;
    return d / dt <= this.#options.maxSpeedKmh / 3.6;
  }
}
