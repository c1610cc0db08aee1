/**
 * Retry-After (RFC 9110 10.2.3): delay-seconds or an HTTP-date. A date is measured against the
 * response's own Date header when there is one, so that a gateway whose wall clock is off (no RTC
 * at boot) still gets the delay the server meant; otherwise against our wall clock.
 * Returns undefined when absent or unparsable; never negative; capped at a day.
 */
export const MAX_RETRY_AFTER_MS = 24 * 3600 * 1000;

type Headers = Record<string, string | string[] | undefined>;

function header(headers: Headers, name: string): string | undefined {
  const v = headers[name] ?? headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

export function parseRetryAfter(headers: Headers, nowWallMs: number): number | undefined {
  const value = header(headers, 'retry-after')?.trim();
  if (value === undefined || value === '') return undefined;
  if (/^\d+$/.test(value)) return Math.min(Number(value) * 1000, MAX_RETRY_AFTER_MS);
  // Every HTTP-date form (IMF-fixdate, RFC 850, asctime) begins with the day name; anything else
  // ("-5", "1.5") is malformed, although Date.parse would make a year of it.
  if (!/^[A-Za-z]/.test(value)) return undefined;
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  const serverNow = Date.parse(header(headers, 'date') ?? '');
  const reference = Number.isNaN(serverNow) ? nowWallMs : serverNow;
  return Math.min(Math.max(0, at - reference), MAX_RETRY_AFTER_MS);
}
