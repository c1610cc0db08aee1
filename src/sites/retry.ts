import { atLeastRetryAfter, backoffMs } from '../retry/backoff.js';
import { statusMeaning } from '../retry/status-table.js';

/**
 * Whether to try a location upload again, as a small function of plain facts, so that a table of
 * cases tests every answer without a network. A location PUT is an upsert keyed by id
 * (docs/platform-contract.md, Sites), so repeating it is safe even when an earlier attempt may have
 * reached the platform.
 */

export interface RetryFacts {
  /** HTTP status of the attempt, or undefined when it failed without an answer (network, deadline). */
  status?: number;
  /** For failures without an answer: whether the error is worth repeating (PlatformError.retryable). */
  retryable?: boolean;
  /** Retry-After of the answer, ms. */
  retryAfterMs?: number;
  /** 1 for the first attempt. */
  attempt: number;
}

export interface RetryPolicy {
  maxAttempts: number;
  minBackoffMs: number;
  maxBackoffMs: number;
}

/** A command a person waits for: four attempts over about 7 s (1 s, 2 s, 4 s), then a clear failure. */
export const DEFAULT_LOCATION_RETRY: RetryPolicy = { maxAttempts: 4, minBackoffMs: 1000, maxBackoffMs: 15_000 };

export type RetryDecision =
  | { action: 'done' }
  | { action: 'retry'; delayMs: number }
  /** Transient, but out of attempts (or the platform asks for a longer wait than a person should). */
  | { action: 'give-up'; reason: string }
  /** Not worth repeating: the request or the configuration must change. */
  | { action: 'stop' };

/** `random` in [0, 1) spreads retries of several gateways (equal jitter: half fixed, half random). */
export function decideRetry(facts: RetryFacts, policy: RetryPolicy, random: () => number = Math.random): RetryDecision {
  const { status } = facts;
  if (status !== undefined && statusMeaning('locations', status) === 'done') return { action: 'done' };
  // The `locations` column of retry/status-table.ts.
  const transient = status === undefined ? facts.retryable === true : statusMeaning('locations', status) === 'transient';
  if (!transient) return { action: 'stop' };
  if (facts.attempt >= policy.maxAttempts)
    return { action: 'give-up', reason: `gave up after ${facts.attempt} attempt${facts.attempt === 1 ? '' : 's'}` };
  if (facts.retryAfterMs !== undefined && facts.retryAfterMs > policy.maxBackoffMs) {
    return { action: 'give-up', reason: `the platform asks to wait ${Math.ceil(facts.retryAfterMs / 1000)} s before trying again` };
  }
  const r = random();
  const jittered = backoffMs(facts.attempt, { minMs: policy.minBackoffMs, maxMs: policy.maxBackoffMs }, r);
  return { action: 'retry', delayMs: atLeastRetryAfter(jittered, facts.retryAfterMs, Infinity, r) };
}
