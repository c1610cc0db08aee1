/**
 * Capped exponential backoff with jitter for reopening the receiver: a USB receiver that was
 * unplugged is retried quickly at first, then every `maxMs` at most; the jitter keeps several
 * agents (or ports) from retrying in lockstep.
 */

import type { Clock } from '../../system/clock.js';
import { backoffMs } from '../../retry/backoff.js';
import type { LinkState } from './source.js';

export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
  /** 0..1, the fraction of the delay that is randomised. */
  jitter: number;
}

export const BACKOFF_DEFAULTS: BackoffOptions = { initialMs: 500, maxMs: 30_000, jitter: 0.5 };

/**
 * Delay before attempt number `attempt` (1 = first retry): retry/backoff.ts. The receiver's delay
 * has always been counted down from the nominal step (random 0 = the full step), so the random
 * number is mirrored; the distribution is the same.
 */
export function backoffDelay(attempt: number, options: BackoffOptions = BACKOFF_DEFAULTS, random: () => number = Math.random): number {
  return backoffMs(attempt, { minMs: options.initialMs, maxMs: options.maxMs, jitter: options.jitter }, 1 - random());
}

/**
 * The link supervisors' (serial port, gpsd) next attempt: marks `link` as retrying, with when, and
 * calls `reopen` after the backoff for `attempts` failed attempts. Returns the timer for stop().
 */
export function scheduleReopen(
  link: LinkState,
  attempts: number,
  o: { backoff?: BackoffOptions; random?: () => number; clock: Pick<Clock, 'wallMs'> },
  reopen: () => void,
): NodeJS.Timeout {
  const delay = backoffDelay(attempts, o.backoff ?? BACKOFF_DEFAULTS, o.random);
  link.status = 'retrying';
  link.nextAttemptAt = o.clock.wallMs() + delay;
  return setTimeout(reopen, delay);
}
