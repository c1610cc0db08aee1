/**
 * The one backoff formula of the agent: capped exponential growth with jitter. Every retrying part
 * (uploader, registration, token manager, location upload, receiver reopen) calls this with its own
 * configured minimum and maximum, so they differ in their numbers, never in their arithmetic.
 *
 * - `equal` jitter (the default): half of the step fixed, half random, so retries of many gateways
 *   spread out but a delay never collapses to zero (a 5xx storm stays a trickle).
 * - `full` jitter: anywhere in [0, step]; for callers that only need to break lockstep.
 * - a number f in [0, 1]: the randomised fraction of the step (equal is 0.5, full is 1).
 *
 * `random` is a number in [0, 1), passed in so that tests are exact.
 */

export type Jitter = 'equal' | 'full' | number;

export interface BackoffPolicy {
  /** The first step (attempt 1). */
  minMs: number;
  /** The cap of the step; the delay never exceeds it. */
  maxMs: number;
  /** Default 'equal'. */
  jitter?: Jitter;
}

/** 2^30 steps is beyond any cap; bounding the exponent keeps the arithmetic finite. */
const MAX_DOUBLINGS = 30;

/** The step before jitter for `attempt` (1 = first failure): min doubled attempt-1 times, capped. */
export function backoffStepMs(attempt: number, policy: BackoffPolicy): number {
  const doublings = Math.min(Math.max(attempt - 1, 0), MAX_DOUBLINGS);
  return Math.min(policy.maxMs, policy.minMs * 2 ** doublings);
}

/** The jittered delay before the next try after `attempt` failures. */
export function backoffMs(attempt: number, policy: BackoffPolicy, random: number): number {
  const step = backoffStepMs(attempt, policy);
  const r = Math.min(Math.max(random, 0), 1);
  const jitter = policy.jitter ?? 'equal';
  const fraction = jitter === 'equal' ? 0.5 : jitter === 'full' ? 1 : Math.min(Math.max(jitter, 0), 1);
  const fixed = step * (1 - fraction);
  return Math.round(fixed + (step - fixed) * r);
}

/**
 * The server's Retry-After is a floor under our own delay (RFC 9110 10.2.3); `capMs`, when given,
 * caps a misbehaving server's demand too.
 */
export function atLeastRetryAfter(delayMs: number, retryAfterMs: number | undefined, capMs = Infinity): number {
  return Math.min(capMs, Math.max(delayMs, retryAfterMs ?? 0));
}
