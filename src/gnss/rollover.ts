/**
 * GPS week-number rollover. The GPS week counter in the legacy navigation message has 10 bits and
 * wraps every 1024 weeks (last on 2019-04-06); receivers with old firmware then report dates 19.6
 * years in the past. Like gpsd (gpsd_gpstime_resolv / gpsd_utc_resolve), a date before a reference
 * (here the agent's release date minus a margin) is moved forward by 1024 weeks.
 */
import { RELEASE_DATE_MS } from '../version.js';

export const WEEK_ROLLOVER_MS = 1024 * 7 * 86_400_000;

export interface RolloverOptions {
  /** Dates before this are suspects (default: the release date of this build). */
  releaseDateMs?: number;
  /** Tolerance before the release date, days (config `quality.minDateMarginDays`). */
  minDateMarginDays?: number;
}

/** The earliest date the agent accepts: release date minus the margin. */
export function earliestValidTime(options: RolloverOptions = {}): number {
  return (options.releaseDateMs ?? RELEASE_DATE_MS) - (options.minDateMarginDays ?? 365) * 86_400_000;
}

/** Moves a time forward by whole 1024-week periods until it is not before the earliest valid time. */
export function correctWeekRollover(timeMs: number, options: RolloverOptions = {}): number {
  const earliest = earliestValidTime(options);
  let t = timeMs;
  // At most three periods (58 years): a receiver from the first GPS epoch (1980) is still covered.
  for (let i = 0; i < 3 && t < earliest; i++) t += WEEK_ROLLOVER_MS;
  return t;
}
