/**
 * When the token manager renews the pair: the margin before the access token's lifetime runs out,
 * and, for an idle agent (a parked vehicle), whether the renewal waits for the next request.
 */

/**
 * Refresh this long before the access token's lifetime (from receipt, on the boot clock) runs out,
 * at most a tenth of the lifetime: room for one request at its whole deadline (30 s) and the token
 * service's first retries (2, 4, 8, 16 s) before the token is gone. Measured by bench:fleet --real
 * (1,000 agents, a token-service outage as the hour-long tokens came due): at most one refresh per
 * device-hour, no password grant after the first. No installer has a reason to change it.
 */
export const TOKEN_REFRESH_MARGIN_S = 120;

/**
 * The token is renewed ahead of its lifetime only while requests use it: within this long of the
 * last one. A moving vehicle sends an event at least every recording.maxIntervalS (60 s), so it
 * never waits for a refresh; a parked one renews at its next heartbeat, in the same wake-up, instead
 * of opening a connection to the token service of its own every hour (a cold one costs 13.7 KB).
 */
export const TOKEN_KEEP_FRESH_S = 600;

/**
 * An idle agent still refreshes once its pair is this old, whether a request came or not (a parked
 * vehicle without a fix sends no heartbeat): a quarter of the refresh token's 86,400 s, so a
 * token-service outage of up to 18 hours from that moment still ends in a refresh, not a password grant.
 */
export const TOKEN_IDLE_REFRESH_AGE_S = 21_600;

/** Milliseconds after receipt at which a pair of this lifetime is due: the margin, at most a tenth of the lifetime. */
export function renewAfterMs(expiresInS: number, refreshMarginS: number): number {
  const lifeMs = expiresInS * 1000;
  return lifeMs - Math.min(refreshMarginS * 1000, lifeMs / 10);
}

/**
 * Idle (no request used the token within keepFreshS) and the pair younger than idleRefreshAgeS:
 * the next request renews it. Without keepFreshS the pair is always renewed ahead.
 */
export function waitsForRequest(
  tuning: { keepFreshS?: number | undefined; idleRefreshAgeS?: number | undefined },
  at: { nowMonoMs: number; lastUseMs: number | undefined; nowBootMs: number; receivedAtMs: number | undefined },
): boolean {
  const { keepFreshS, idleRefreshAgeS } = tuning;
  if (keepFreshS === undefined) return false;
  const idle = at.lastUseMs === undefined || at.nowMonoMs - at.lastUseMs >= keepFreshS * 1000;
  if (!idle || at.receivedAtMs === undefined) return false;
  return idleRefreshAgeS === undefined || at.nowBootMs - at.receivedAtMs < idleRefreshAgeS * 1000;
}
