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
 *
 * With `random` (every retry path of the agent passes one), a Retry-After longer than our own delay
 * is not obeyed to the millisecond: a thousand gateways told "Retry-After: 60" by one overloaded
 * platform would otherwise all come back in the same second. The wait is spread over
 * [Retry-After, 1.5 x Retry-After] (never shorter than the server asked), and a demand at or over
 * the cap over [0.75 x cap, cap].
 */
export function atLeastRetryAfter(delayMs: number, retryAfterMs: number | undefined, capMs = Infinity, random?: number): number {
  const floor = retryAfterMs ?? 0;
  if (random === undefined || floor <= delayMs) return Math.min(capMs, Math.max(delayMs, floor));
  const r = Math.min(Math.max(random, 0), 1);
  if (floor >= capMs) return Math.round(capMs * (0.75 + 0.25 * r));
  return Math.round(Math.min(capMs, floor * (1 + 0.5 * r)));
}

/**
 * A fixed long wait (the longest backoff, a configuration retry), spread with equal jitter over
 * [waitMs / 2, waitMs] so that a fleet that met the same fault at the same moment does not probe in
 * lockstep.
 */
export function spreadMs(waitMs: number, random: number): number {
  return backoffMs(1, { minMs: waitMs, maxMs: waitMs }, random);
}
