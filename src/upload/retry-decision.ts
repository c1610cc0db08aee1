import type { ErrorClass } from '../errors.js';
import { atLeastRetryAfter, backoffMs, spreadMs } from '../retry/backoff.js';
import { statusMeaning } from '../retry/status-table.js';

/**
 * What to do with one event after one attempt: the whole retry policy of the uploader in one pure
 * function of plain facts, tested as a table (test/upload/retry-decision.test.ts). What each status
 * means for the events endpoint is the `events` column of retry/status-table.ts:
 *
 * - done (2xx, and 409: the id is the idempotency key, so "conflict" means the platform already
 *   holds this event): delivered.
 * - rejected (400, 413, 422 and other 4xx about the event itself): the platform refused this one
 *   event; the uploader decides with the rejection rule (rejection-rule.ts) whether it is that
 *   event's fault (dead letter) or the platform refusing everything (keep it queued).
 * - auth (401 reaching us: the requester already refreshed and retried once, contracts.ts): the
 *   credentials or token service are the problem, not the event: back off, keep it queued.
 * - config (403, 404, 405, 407, 410, 415, 426, 451): not this event's fault: back off at the
 *   longest delay (equal jitter: half to all of it), keep it queued, report the class so status
 *   names the fix.
 * - transient (408, 425, 429, 5xx, network errors and deadlines): exponential backoff with equal
 *   jitter, never shorter than the platform's Retry-After (and spread above it, retry/backoff.ts).
 * - an HTTP/2 stream refused unprocessed (RST_STREAM REFUSED_STREAM), after the transport's
 *   immediate resends (http.ts): the first step's delay, without counting towards the backoff.
 * Every delay is jittered: a fleet that met the same outage never retries in lockstep.
 */

export type AttemptResult =
  /** An HTTP answer (after the requester's own 401 handling). */
  | { kind: 'response'; status: number; retryAfterMs?: number }
  /**
   * The requester rejected: network error, deadline, no token (PlatformError). `notProcessed`: the
   * server refused the HTTP/2 stream unprocessed (RST_STREAM REFUSED_STREAM) even after the
   * transport's immediate resends.
   */
  | { kind: 'error'; errorClass: ErrorClass; retryAfterMs?: number; notProcessed?: boolean };

/** The uploader's bounds; retry/backoff.ts's BackoffPolicy is the general one these are handed to. */
export interface UploadBackoff {
  minBackoffMs: number;
  maxBackoffMs: number;
}

/**
 * The uploader's backoff, doubling from 1 s (a dropped packet or a platform restart costs a second)
 * to 5 min (a vehicle learns an outage is over within half to all of it). bench:fleet, 1,000 agents
 * and a 5-minute events outage: recovery peak 1.59x the steady rate, every backlog drained 6.0 min
 * after; no installer has a reason to change it (tests and benches shorten it through AgentOptions.tuning).
 */
export const UPLOAD_BACKOFF: UploadBackoff = { minBackoffMs: 1000, maxBackoffMs: 300_000 };

export type UploadDecision =
  | { action: 'sent' }
  | { action: 'refused' }
  /** holdBackoff: this failure does not count towards the next delay (the server processed nothing). */
  | { action: 'retry'; delayMs: number; errorClass: ErrorClass; holdBackoff?: boolean };

/**
 * @param failures consecutive failed attempts so far, this one included (1 for the first failure)
 * @param random a number in [0, 1) for the jitter (injected so tests are exact)
 */
export function decideUpload(result: AttemptResult, failures: number, policy: UploadBackoff, random: number): UploadDecision {
  if (result.kind === 'response') {
    switch (statusMeaning('events', result.status)) {
      case 'done':
        return { action: 'sent' };
      case 'rejected':
        return { action: 'refused' };
      case 'auth':
      case 'credentials':
        return retry('auth', failures, policy, random, result.retryAfterMs);
      case 'config':
        return { action: 'retry', delayMs: spreadMs(policy.maxBackoffMs, random), errorClass: 'config' };
      case 'transient':
        return retry('transient', failures, policy, random, result.retryAfterMs);
    }
  }
  // A refused stream is the server saying "not this one, not now", not a failure of the link or
  // the platform: the first step's delay, and the backoff does not grow.
  if (result.notProcessed)
    return { action: 'retry', delayMs: uploadBackoffMs(1, policy, random), errorClass: 'transient', holdBackoff: true };
  if (result.errorClass === 'config') return { action: 'retry', delayMs: spreadMs(policy.maxBackoffMs, random), errorClass: 'config' };
  const cls = result.errorClass === 'auth' ? 'auth' : 'transient';
  return retry(cls, failures, policy, random, result.retryAfterMs);
}

/** The uploader's backoff: retry/backoff.ts between the policy's bounds (UPLOAD_BACKOFF in the daemon), equal jitter. */
export function uploadBackoffMs(failures: number, policy: UploadBackoff, random: number): number {
  return backoffMs(failures, { minMs: policy.minBackoffMs, maxMs: policy.maxBackoffMs }, random);
}

function retry(
  errorClass: ErrorClass,
  failures: number,
  policy: UploadBackoff,
  random: number,
  retryAfterMs: number | undefined,
): UploadDecision {
  // Retry-After is the server's floor; maxBackoffMs caps a misbehaving server's demand too.
  const delayMs = atLeastRetryAfter(uploadBackoffMs(failures, policy, random), retryAfterMs, policy.maxBackoffMs, random);
  return { action: 'retry', delayMs, errorClass };
}
