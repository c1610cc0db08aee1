import { describe, expect, it } from 'vitest';
import { uploadBackoffMs, decideUpload, UPLOAD_BACKOFF, type AttemptResult, type UploadDecision } from '../../src/upload/retry-decision.js';

/** The daemon's bounds: 1 s after one failure, 5 min after nine. */
const policy = UPLOAD_BACKOFF;
const r = (status: number, retryAfterMs?: number): AttemptResult => ({
  kind: 'response',
  status,
  ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
});

// [what, result, failures, random, decision]
const table: [string, AttemptResult, number, number, UploadDecision][] = [
  ['200 delivered', r(200), 1, 0.5, { action: 'sent' }],
  ['201 delivered', r(201), 1, 0.5, { action: 'sent' }],
  ['204 delivered', r(204), 3, 0.5, { action: 'sent' }],
  ['409 the platform has this id already', r(409), 1, 0.5, { action: 'sent' }],
  ['400 refused: judged by the rejection rule', r(400), 1, 0.5, { action: 'refused' }],
  ['400 refused even after failures', r(400), 7, 0.5, { action: 'refused' }],
  ['413 too large', r(413), 1, 0.5, { action: 'refused' }],
  ['422 unprocessable', r(422), 1, 0.5, { action: 'refused' }],
  ['401 after the requester refreshed: back off', r(401), 1, 0, { action: 'retry', delayMs: 500, errorClass: 'auth' }],
  ['403 configuration: longest delay, equal jitter', r(403), 1, 0.5, { action: 'retry', delayMs: 225_000, errorClass: 'config' }],
  ['404 wrong eventsPath: longest delay', r(404), 2, 0.5, { action: 'retry', delayMs: 225_000, errorClass: 'config' }],
  ['503 first failure, no jitter', r(503), 1, 0, { action: 'retry', delayMs: 500, errorClass: 'transient' }],
  ['503 first failure, full jitter', r(503), 1, 0.999999, { action: 'retry', delayMs: 1000, errorClass: 'transient' }],
  ['500 third failure doubles twice', r(500), 3, 0, { action: 'retry', delayMs: 2000, errorClass: 'transient' }],
  ['502 tenth failure', r(502), 10, 0.5, { action: 'retry', delayMs: 225_000, errorClass: 'transient' }],
  ['504 capped at max', r(504), 40, 0.999999, { action: 'retry', delayMs: 300_000, errorClass: 'transient' }],
  ['408 request timeout', r(408), 1, 0, { action: 'retry', delayMs: 500, errorClass: 'transient' }],
  [
    '429 Retry-After above backoff wins, spread above it',
    r(429, 30_000),
    1,
    0.5,
    { action: 'retry', delayMs: 37_500, errorClass: 'transient' },
  ],
  ['429 Retry-After below backoff: backoff', r(429, 100), 4, 0, { action: 'retry', delayMs: 4000, errorClass: 'transient' }],
  [
    '429 absurd Retry-After capped, spread below the cap',
    r(429, 86_400_000),
    1,
    0,
    { action: 'retry', delayMs: 225_000, errorClass: 'transient' },
  ],
  ['503 with Retry-After', r(503, 5000), 1, 0, { action: 'retry', delayMs: 5000, errorClass: 'transient' }],
  ['network error', { kind: 'error', errorClass: 'transient' }, 1, 0, { action: 'retry', delayMs: 500, errorClass: 'transient' }],
  [
    'deadline, second failure',
    { kind: 'error', errorClass: 'transient' },
    2,
    0,
    { action: 'retry', delayMs: 1000, errorClass: 'transient' },
  ],
  ['no token (auth)', { kind: 'error', errorClass: 'auth' }, 1, 0, { action: 'retry', delayMs: 500, errorClass: 'auth' }],
  [
    'credentials rejected (config)',
    { kind: 'error', errorClass: 'config' },
    1,
    0,
    { action: 'retry', delayMs: 150_000, errorClass: 'config' },
  ],
  [
    'internal error treated as transient',
    { kind: 'error', errorClass: 'internal' },
    1,
    0,
    { action: 'retry', delayMs: 500, errorClass: 'transient' },
  ],
  ['302 is no answer of an intake', r(302), 1, 0, { action: 'retry', delayMs: 500, errorClass: 'transient' }],
  // The events column of src/retry/status-table.ts: every request gets the same answer,
  // so no single event is at fault.
  ['405 wrong eventsPath: configuration', r(405), 1, 0.5, { action: 'retry', delayMs: 225_000, errorClass: 'config' }],
  ['407 proxy wants credentials: configuration', r(407), 1, 0.5, { action: 'retry', delayMs: 225_000, errorClass: 'config' }],
  ['410 gone: configuration', r(410), 1, 0.5, { action: 'retry', delayMs: 225_000, errorClass: 'config' }],
  ['415 body type: configuration', r(415), 1, 0.5, { action: 'retry', delayMs: 225_000, errorClass: 'config' }],
  ['426 upgrade required: configuration', r(426), 1, 0.5, { action: 'retry', delayMs: 225_000, errorClass: 'config' }],
  ['451 blocked: configuration', r(451), 1, 0.5, { action: 'retry', delayMs: 225_000, errorClass: 'config' }],
  ['425 too early: transient', r(425), 1, 0, { action: 'retry', delayMs: 500, errorClass: 'transient' }],
  // RST_STREAM REFUSED_STREAM after the transport's immediate resends: the first
  // step's delay however many failures came before, and the backoff does not grow for it.
  [
    'refused stream after 9 failures: first step, backoff held',
    { kind: 'error', errorClass: 'transient', notProcessed: true },
    9,
    0,
    { action: 'retry', delayMs: 500, errorClass: 'transient', holdBackoff: true },
  ],
];

describe('decideUpload', () => {
  it.each(table)('%s', (_what, result, failures, random, expected) => {
    expect(decideUpload(result, failures, policy, random)).toEqual(expected);
  });

  it('backoff grows exponentially and stays within [step/2, step]', () => {
    for (let f = 1; f <= 12; f++) {
      const step = Math.min(policy.maxBackoffMs, 1000 * 2 ** (f - 1));
      expect(uploadBackoffMs(f, policy, 0)).toBe(step / 2);
      expect(uploadBackoffMs(f, policy, 0.999999)).toBeLessThanOrEqual(step);
      expect(uploadBackoffMs(f, policy, 0.999999)).toBeGreaterThan(step * 0.99);
    }
  });
});
