import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from '../../src/retry/retry-after.js';

describe('Retry-After', () => {
  // The wall clock is injected: "now" is a fixed instant, so dates are exact.
  const now = Date.UTC(2026, 10, 22, 8, 0, 0);
  it.each([
    ['seconds', { 'retry-after': '120' }, 120_000],
    ['seconds with blanks around', { 'retry-after': ' 7 ' }, 7000],
    ['zero seconds', { 'retry-after': '0' }, 0],
    [
      'an HTTP-date, measured against the Date header (our clock may be off)',
      { 'retry-after': 'Sun, 22 Nov 2026 09:00:30 GMT', date: 'Sun, 22 Nov 2026 09:00:00 GMT' },
      30_000,
    ],
    ['an HTTP-date without a Date header, against our clock', { 'retry-after': 'Sun, 22 Nov 2026 08:01:00 GMT' }, 60_000],
    [
      'an HTTP-date with an unreadable Date header, against our clock',
      { 'retry-after': 'Sun, 22 Nov 2026 08:01:00 GMT', date: 'x' },
      60_000,
    ],
    ['a date in the past', { 'retry-after': 'Sun, 22 Nov 2026 07:00:00 GMT' }, 0],
    ['absurdly long, capped at a day', { 'retry-after': '99999999' }, 86_400_000],
    ['a repeated header: the first', { 'retry-after': ['3', '9'] }, 3000],
    ['negative seconds are no delay-seconds', { 'retry-after': '-5' }, undefined],
    ['fractions are no delay-seconds', { 'retry-after': '1.5' }, undefined],
    ['garbage', { 'retry-after': 'soon' }, undefined],
    ['empty', { 'retry-after': '' }, undefined],
    ['absent', {}, undefined],
  ])('%s', (_name, headers, expected) => {
    expect(parseRetryAfter(headers, now)).toBe(expected);
  });
});
