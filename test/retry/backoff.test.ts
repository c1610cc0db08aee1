import { describe, expect, it } from 'vitest';
import { atLeastRetryAfter, backoffMs, backoffStepMs } from '../../src/retry/backoff.js';

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
