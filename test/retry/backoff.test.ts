import { describe, expect, it } from 'vitest';
import { atLeastRetryAfter, backoffMs, backoffStepMs, spreadMs } from '../../src/retry/backoff.js';

const policy = { minMs: 1000, maxMs: 60_000 };

describe('backoff', () => {
  it.each([
    // attempt, random, jitter, delay
    [1, 0, 'equal', 500],
    [1, 0.5, 'equal', 750],
    [1, 0.999999, 'equal', 1000],
    [3, 0, 'equal', 2000],
    [3, 0.5, 'equal', 3000],
    [7, 0, 'equal', 30_000],
    [7, 0.999999, 'equal', 60_000],
    [1000, 0.5, 'equal', 45_000],
    [0, 0, 'equal', 500],
    [-3, 0.999999, 'equal', 1000],
    [1, 0, 'full', 0],
    [3, 0.5, 'full', 2000],
    [10, 0.25, 'full', 15_000],
    [3, 0, 0.25, 3000],
    [3, 0.999999, 0.25, 4000],
    [3, 0.5, 0, 4000],
  ] as const)('attempt %i, random %d, %s jitter: %i ms', (attempt, random, jitter, delay) => {
    expect(backoffMs(attempt, { ...policy, jitter }, random)).toBe(delay);
  });

  it('equal jitter is the default and stays within [step/2, step], capped', () => {
    for (let a = 1; a <= 40; a++) {
      const step = backoffStepMs(a, policy);
      expect(step).toBe(Math.min(60_000, 1000 * 2 ** (a - 1)));
      expect(backoffMs(a, policy, 0)).toBe(step / 2);
      expect(backoffMs(a, policy, 0.999999)).toBeLessThanOrEqual(step);
    }
  });

  it('a random number outside [0, 1) is clamped, never a negative or runaway delay', () => {
    expect(backoffMs(1, policy, -1)).toBe(500);
    expect(backoffMs(1, policy, 7)).toBe(1000);
  });

  it.each([
    [500, undefined, Infinity, 500],
    [500, 2000, Infinity, 2000],
    [5000, 2000, Infinity, 5000],
    [500, 86_400_000, 60_000, 60_000],
  ])('delay %i with Retry-After %s, cap %d: %i', (delay, retryAfterMs, cap, expected) => {
    expect(atLeastRetryAfter(delay, retryAfterMs, cap)).toBe(expected);
  });
});

describe('Retry-After with jitter (every retry path passes a random number)', () => {
  it('is never shorter than the server asked, and spread up to 1.5 times it', () => {
    expect(atLeastRetryAfter(1000, 60_000, Infinity, 0)).toBe(60_000);
    expect(atLeastRetryAfter(1000, 60_000, Infinity, 0.5)).toBe(75_000);
    expect(atLeastRetryAfter(1000, 60_000, Infinity, 0.999999)).toBeLessThanOrEqual(90_000);
  });
  it('our own longer delay wins unchanged', () => {
    expect(atLeastRetryAfter(8000, 5000, Infinity, 0.9)).toBe(8000);
  });
  it('a demand over the cap is spread below the cap, not all at the cap', () => {
    expect(atLeastRetryAfter(1000, 86_400_000, 300_000, 0)).toBe(225_000);
    expect(atLeastRetryAfter(1000, 86_400_000, 300_000, 0.999999)).toBeLessThanOrEqual(300_000);
  });
  it('a thousand agents told the same Retry-After come back over a window, not in one second', () => {
    const delays = Array.from({ length: 1000 }, (_, i) => atLeastRetryAfter(500, 60_000, 300_000, (i + 0.5) / 1000));
    const perSecond = new Map<number, number>();
    for (const d of delays) perSecond.set(Math.floor(d / 1000), (perSecond.get(Math.floor(d / 1000)) ?? 0) + 1);
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(60_000);
    expect(Math.max(...perSecond.values())).toBeLessThanOrEqual(40); // 30 s window: about 33 a second
  });
  it('spreadMs: a fixed long wait over [wait/2, wait]', () => {
    expect(spreadMs(300_000, 0)).toBe(150_000);
    expect(spreadMs(300_000, 0.5)).toBe(225_000);
    expect(spreadMs(300_000, 0.999999)).toBeLessThanOrEqual(300_000);
  });
});
