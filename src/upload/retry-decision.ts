import type { ErrorClass } from '../errors.js';

/**
 * What to do with one event after one attempt: the whole retry policy of the uploader in one pure
 * function of plain facts, tested as a table (test/upload/retry-decision.test.ts).
 *
 * - 2xx: delivered. 409 too: the id is the idempotency key, so "conflict" means the platform
 *   already holds this event.
 * - 400, 413, 422 and other 4xx about the event itself: the platform refused this one event for
 *   good; dead-letter it with the platform's answer so that it never blocks the queue.
 * - 401 reaching us: the requester already refreshed and retried once (contracts.ts), so the
 *   credentials or token service are the problem, not the event: back off, keep it queued.
 * - 403 and 404: configuration (permission, eventsPath); not this event's fault: back off at the
 *   longest delay, keep it queued, report the class so status names the fix.
 * - 408, 429, 5xx, network errors and deadlines: transient; exponential backoff with jitter,
 *   never shorter than the platform's Retry-After.
 */

export type AttemptResult =
  /** An HTTP answer (after the requester's own 401 handling). */
  | { kind: 'response'; status: number; retryAfterMs?: number }
  /** The requester rejected: network error, deadline, no token (PlatformError). */
  | { kind: 'error'; errorClass: ErrorClass; retryAfterMs?: number };

export interface BackoffPolicy {
  minBackoffMs: number;
  maxBackoffMs: number;
}

export type UploadDecision = { action: 'sent' } | { action: 'dead-letter' } | { action: 'retry'; delayMs: number; errorClass: ErrorClass };

/**
 * @param failures consecutive failed attempts so far, this one included (1 for the first failure)
 * @param random a number in [0, 1) for the jitter (injected so tests are exact)
 */
export function decideUpload(result: AttemptResult, failures: number, policy: BackoffPolicy, random: number): UploadDecision {
  if (result.kind === 'response') {
    const s = result.status;
    if ((s >= 200 && s < 300) || s === 409) return { action: 'sent' };
    if (s === 401) return retry('auth', failures, policy, random, result.retryAfterMs);
    if (s === 403 || s === 404) return { action: 'retry', delayMs: policy.maxBackoffMs, errorClass: 'config' };
    if (s === 408 || s === 429 || s >= 500) return retry('transient', failures, policy, random, result.retryAfterMs);
    if (s >= 400) return { action: 'dead-letter' };
    // 1xx/3xx are not answers an event intake gives; treat as a transient oddity.
    return retry('transient', failures, policy, random, result.retryAfterMs);
  }
  if (result.errorClass === 'config') return { action: 'retry', delayMs: policy.maxBackoffMs, errorClass: 'config' };
  const cls = result.errorClass === 'auth' ? 'auth' : 'transient';
  return retry(cls, failures, policy, random, result.retryAfterMs);
}

/** "Equal jitter": half the exponential step fixed, half random, so retries spread but never hit 0. */
export function backoffMs(failures: number, policy: BackoffPolicy, random: number): number {
  const exp = Math.min(policy.maxBackoffMs, policy.minBackoffMs * 2 ** Math.max(0, Math.min(failures - 1, 30)));
  return Math.round(exp / 2 + (exp / 2) * random);
}

function retry(
  errorClass: ErrorClass,
  failures: number,
  policy: BackoffPolicy,
  random: number,
  retryAfterMs: number | undefined,
): UploadDecision {
  const jittered = backoffMs(failures, policy, random);
  // Retry-After is the server's floor; maxBackoffMs caps a misbehaving server's demand too.
  const delayMs = Math.min(policy.maxBackoffMs, Math.max(jittered, retryAfterMs ?? 0));
  return { action: 'retry', delayMs, errorClass };
}
