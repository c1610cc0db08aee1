/**
 * Capped exponential backoff with jitter for reopening the receiver: a USB receiver that was
 * unplugged is retried quickly at first, then every `maxMs` at most; the jitter keeps several
 * agents (or ports) from retrying in lockstep.
 */

export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  /** 0..1, the fraction of the delay that is randomised. */
  jitter: number;
}

export const BACKOFF_DEFAULTS: BackoffOptions = { initialMs: 500, maxMs: 30_000, jitter: 0.5 };

/** Delay before attempt number `attempt` (1 = first retry). */
export function backoffDelay(attempt: number, options: BackoffOptions = BACKOFF_DEFAULTS, random: () => number = Math.random): number {
  const exp = Math.min(options.maxMs, options.initialMs * 2 ** Math.min(Math.max(attempt - 1, 0), 30));
  return Math.round(exp * (1 - options.jitter * random()));
}
