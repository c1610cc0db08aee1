/**
 * Whole days from a wall time to now, as the status texts round them, for checks of a clock that
 * is decades wrong: the count grows by one every day, so a test must compute it, never pin it.
 * The pattern takes the day before and after too (the rounding and a test that runs past midnight).
 */
export function daysSincePattern(fromMs: number, nowMs = Date.now()): string {
  const days = Math.round((nowMs - fromMs) / 86_400_000);
  return `(?:${days - 1}|${days}|${days + 1})`;
}
