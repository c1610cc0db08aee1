/**
 * Field parsers shared by the sentence decoders. Each returns `undefined` for an empty or malformed
 * field: an empty NMEA field means "unknown", never 0 (nmea-simple turns empty fields into 0 or -0,
 * which is one of the reasons the hot sentences are decoded here; see decode.ts).
 */

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** A decimal number, or undefined when empty or not a finite number. */
export function num(s: string | undefined): number | undefined {
  if (s === undefined || s === '') return undefined;
  const n = +s;
  return Number.isFinite(n) ? n : undefined;
}

/** A non-negative integer written with digits only (satellite ids, counts, fix quality). */
export function uint(s: string | undefined): number | undefined {
  if (s === undefined || s === '' || s.length > 9) return undefined;
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return undefined;
    n = n * 10 + c;
  }
  return n;
}

/**
 * NMEA `(d)ddmm.mmmm` plus hemisphere to signed decimal degrees. The hemisphere must be one of the
 * two letters of its axis: a garbled one makes the whole position unknown rather than mirrored.
 */
export function coordinate(
  value: string | undefined,
  hemisphere: string | undefined,
  positive: string,
  negative: string,
  maxDegrees: number,
): number | undefined {
  if (value === undefined || value === '' || value.length > 16) return undefined;
  if (hemisphere !== positive && hemisphere !== negative) return undefined;
  // Integer degrees and minutes from the digits before the point, the fraction added after (as
  // gpsd's decode_lat_or_lon): subtracting degrees*100 from the float would leave 22.4465999...
  const dot = value.indexOf('.');
  const whole = uint(dot < 0 ? value : value.slice(0, dot));
  const fraction = dot < 0 || dot === value.length - 1 ? 0 : +value.slice(dot);
  if (whole === undefined || !Number.isFinite(fraction) || fraction < 0) return undefined;
  const degrees = Math.trunc(whole / 100);
  const minutes = whole - degrees * 100 + fraction;
  if (minutes >= 60) return undefined;
  const deg = degrees + minutes / 60;
  if (deg > maxDegrees) return undefined;
  return hemisphere === negative ? -deg : deg;
}

export function latitude(value: string | undefined, hemisphere: string | undefined): number | undefined {
  return coordinate(value, hemisphere, 'N', 'S', 90);
}

export function longitude(value: string | undefined, hemisphere: string | undefined): number | undefined {
  return coordinate(value, hemisphere, 'E', 'W', 180);
}

function twoDigits(s: string, at: number): number {
  const a = s.charCodeAt(at) - 48;
  const b = s.charCodeAt(at + 1) - 48;
  if (a < 0 || a > 9 || b < 0 || b > 9) return -1;
  return a * 10 + b;
}

/**
 * `hhmmss[.sss]` to milliseconds since midnight UTC, keeping the fraction (nmea-simple drops RMC
 * milliseconds, which merges 10 Hz epochs). Second 60 is allowed for a leap second.
 */
export function timeOfDay(s: string | undefined): number | undefined {
  if (s === undefined || s.length < 6 || s.length > 16) return undefined;
  const h = twoDigits(s, 0);
  const m = twoDigits(s, 2);
  const sec = twoDigits(s, 4);
  if (h < 0 || h > 23 || m < 0 || m > 59 || sec < 0 || sec > 60) return undefined;
  let ms = 0;
  if (s.length > 6) {
    if (s.charCodeAt(6) !== 46 /* . */) return undefined;
    const frac = s.length === 7 ? 0 : +`0${s.slice(6)}`;
    if (!Number.isFinite(frac)) return undefined;
    ms = Math.round(frac * 1000);
  }
  return ((h * 60 + m) * 60 + sec) * 1000 + ms;
}

/** A calendar date to epoch ms at midnight UTC, or undefined when it does not exist. */
export function utcDate(year: number, month: number, day: number): number | undefined {
  if (month < 1 || month > 12 || day < 1) return undefined;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const max = month === 2 && !leap ? 28 : (DAYS_IN_MONTH[month - 1] ?? 0);
  if (day > max) return undefined;
  return Date.UTC(year, month - 1, day);
}

/**
 * RMC `ddmmyy`. The century follows gpsd's `merge_ddmmyy`: 20yy, except that years from 2080 on
 * are read as 19yy (so that 1999-era receivers and their week-rollover dates stay in range).
 */
export function ddmmyy(s: string | undefined): number | undefined {
  if (s === undefined || s.length !== 6) return undefined;
  const d = twoDigits(s, 0);
  const m = twoDigits(s, 2);
  const y = twoDigits(s, 4);
  if (d < 0 || m < 0 || y < 0) return undefined;
  const year = 2000 + y >= 2080 ? 1900 + y : 2000 + y;
  return utcDate(year, m, d);
}

export const DAY_MS = 86_400_000;
