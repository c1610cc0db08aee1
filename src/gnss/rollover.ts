/**
 * GPS week-number rollover. The GPS week counter in the legacy navigation message has 10 bits and
 * wraps every 1024 weeks (last on 2019-04-06); receivers with old firmware then report dates 19.6
 * years in the past. Like gpsd (gpsd_gpstime_resolv / gpsd_utc_resolve), a date before a reference
 * (here the agent's release date minus a margin) is moved forward by 1024 weeks.
 *
 * The correction is made only when its result is plausible: not before the earliest valid time
 * (the release date minus `quality.minDateMarginDays`), and, when the host clock is set (not
 * before that same earliest time: a Raspberry Pi without a real-time clock boots in the past),
 * not more than a day ahead of it. A date that no whole number of periods makes plausible is left
 * as it is, and the quality gate rejects it as too old.
 */
import type { Clock } from '../system/clock.js';
import { RELEASE_DATE_MS } from '../version.js';
import { CONFIG_DEFAULTS } from '../config/defaults.js';

export const WEEK_ROLLOVER_MS = 1024 * 7 * 86_400_000;
const DAY_MS = 86_400_000;

export interface RolloverOptions {
  /** Dates before this are suspects (default: the release date of this build). */
  releaseDateMs?: number;
  /** Tolerance before the release date, days (config `quality.minDateMarginDays`). */
  minDateMarginDays?: number;
  /** The host's clock: a corrected date may not run more than a day ahead of its wall clock once set. */
  clock?: Pick<Clock, 'wallMs'>;
}

/** The earliest date the agent accepts: release date minus the margin. */
export function earliestValidTime(options: RolloverOptions = {}): number {
  return (options.releaseDateMs ?? RELEASE_DATE_MS) - (options.minDateMarginDays ?? CONFIG_DEFAULTS.quality.minDateMarginDays) * 86_400_000;
}

/**
 * Moves a time forward by whole 1024-week periods until it is not before the earliest valid time,
 * when the result is plausible (see above); otherwise returns it unchanged.
 */
export function correctWeekRollover(timeMs: number, options: RolloverOptions = {}): number {
  const earliest = earliestValidTime(options);
  if (!(timeMs < earliest)) return timeMs;
  let t = timeMs;
  // At most three periods (58 years): a receiver from the first GPS epoch (1980) is still covered.
  for (let i = 0; i < 3 && t < earliest; i++) t += WEEK_ROLLOVER_MS;
  if (t < earliest) return timeMs;
  const host = options.clock?.wallMs();
  if (host !== undefined && host >= earliest && t > host + DAY_MS) return timeMs;
  return t;
}

export interface RolloverCounters {
  /** Epochs whose date was moved forward by 1024 weeks (or a multiple). */
  corrected: number;
  /** Epochs dated too early that no plausible correction fixed (then rejected as too old). */
  implausible: number;
}

/** correctWeekRollover with counters, for the live pipeline and `status`. */
export class WeekRolloverCorrector {
  readonly counters: RolloverCounters = { corrected: 0, implausible: 0 };
  readonly #options: RolloverOptions;
  readonly #earliest: number;

  constructor(options: RolloverOptions = {}) {
    this.#options = options;
    this.#earliest = earliestValidTime(options);
  }

  readonly correct = (timeMs: number): number => {
    if (!(timeMs < this.#earliest)) return timeMs;
    const t = correctWeekRollover(timeMs, this.#options);
    if (t === timeMs) this.counters.implausible++;
    else this.counters.corrected++;
    return t;
  };
}
