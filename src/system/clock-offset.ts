/**
 * How far the system clock is from GNSS time, in words. The receiver knows the true
 * time; a gateway without a real-time clock boots at 1970, and one with a drifted or wrongly set
 * clock can be years ahead. TLS judges certificates by the system clock, so a certificate "not yet
 * valid" or "expired" with the clock this far off is the clock's fault, not the CA's.
 */

/** What the agent knows of its own clock at a moment: the system's reading and, when known, its offset. */
export interface ClockFacts {
  /** The system's wall clock (epoch ms). */
  wallMs: number;
  /** System clock minus GNSS time (ms), when a live receiver gave its time in this run. */
  offsetMs?: number;
}

/** Within this the clock agrees with GNSS (status's clockOffsetS threshold is the same 5 s). */
export const CLOCK_AGREES_MS = 5000;

/**
 * "730 d (2.0 years) ahead of" / "57 s behind": the offset's size and direction. `tenths` gives
 * seconds to a tenth (doctor: a clock 0.4 s off is not "0 s" off); the larger units are unchanged.
 */
export function describeClockOffset(offsetMs: number, tenths = false): string {
  const s = Math.abs(offsetMs) / 1000;
  const size =
    s < 90
      ? `${tenths ? s.toFixed(1) : Math.round(s)} s`
      : s < 90 * 60
        ? `${Math.round(s / 60)} min`
        : s < 48 * 3600
          ? `${(s / 3600).toFixed(1)} h`
          : s < 365 * 86400
            ? `${Math.round(s / 86400)} d`
            : `${Math.round(s / 86400)} d (${(s / (365.25 * 86400)).toFixed(1)} years)`;
  return `${size} ${offsetMs > 0 ? 'ahead of' : 'behind'}`;
}

/** System clock minus GNSS time (ms): the last epoch's GNSS time advanced by the monotonic clock since it was decoded. */
export function gnssClockOffsetMs(
  clock: { wallMs(): number; monotonicMs(): number },
  lastEpoch: { gnssMs: number; monoMs: number } | undefined,
): number | undefined {
  if (!lastEpoch) return undefined;
  return clock.wallMs() - (lastEpoch.gnssMs + (clock.monotonicMs() - lastEpoch.monoMs));
}
