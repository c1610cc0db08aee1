import { describe, expect, it } from 'vitest';
import { PlatformError } from '../../../src/errors.js';
import { TokenBackoff } from '../../../src/platform/auth/token-backoff.js';
import { ManualClock } from '../../../src/system/clock.js';
import { captureLogger } from '../../helpers/capture-logger.js';

const TUNING = { passwordRetryMinS: 120, passwordRetryMaxS: 3600, serviceRetryMinS: 60, serviceRetryMaxS: 600 };
const TWO_YEARS_MS = 730 * 86_400_000;

/** The token manager's waits on a clock the test sets, as NTP does, with the watch's timers on it. */
function setUp() {
  const clock = new ManualClock({ wallMs: Date.UTC(2028, 10, 22) });
  const log = captureLogger();
  const backoff = new TokenBackoff(TUNING, () => 0.5, { clock, timers: clock, logger: log.logger });
  const fail = (code: 'PLATFORM_TLS_CLOCK' | 'PLATFORM_HTTP_ERROR') =>
    backoff.serviceFailed(clock.monotonicMs(), clock.wallMs(), new PlatformError(code, 'token service failed', { class: 'transient' }));
  return { clock, log, backoff, fail };
}

describe('the token service wait and the clock being set', () => {
  it('a wait grown while TLS refused the certificate by the clock ends when the clock is set: the next request goes', () => {
    const { clock, log, backoff, fail } = setUp();
    fail('PLATFORM_TLS_CLOCK');
    const second = fail('PLATFORM_TLS_CLOCK');
    expect(second.retryAfterMs).toBeGreaterThanOrEqual(60_000);
    expect(() => backoff.check(clock.monotonicMs())).toThrow(/token service failed/);

    // NTP steps the wall clock back two years; the monotonic clock does not move.
    clock.setWall(clock.wallMs() - TWO_YEARS_MS);
    expect(() => backoff.check(clock.monotonicMs())).not.toThrow();
    expect(log.text()).toContain('the system clock was set: the token service is asked at the next request');
    // The failures were the clock's: the next one waits as a first one does.
    expect(fail('PLATFORM_HTTP_ERROR').retryAfterMs).toBeLessThanOrEqual(60_000);
  });

  it('the watch tells the step within a second even when nobody asks', () => {
    const { clock, log, backoff, fail } = setUp();
    fail('PLATFORM_TLS_CLOCK');
    clock.setWall(clock.wallMs() - TWO_YEARS_MS);
    clock.advance(1000);
    expect(log.text()).toMatch(/"stepS":-63072000.*the system clock was set/);
    expect(() => backoff.check(clock.monotonicMs())).not.toThrow();
    expect(clock.nextTimerAt()).toBeUndefined();
  });

  it('a wait for another reason (a 5xx) is kept when the clock steps, and nothing is watched', () => {
    const { clock, backoff, fail } = setUp();
    fail('PLATFORM_TLS_CLOCK');
    fail('PLATFORM_HTTP_ERROR');
    expect(clock.nextTimerAt()).toBeUndefined();
    clock.setWall(clock.wallMs() - TWO_YEARS_MS);
    expect(() => backoff.check(clock.monotonicMs())).toThrow(/token service failed/);
  });

  it('a step within clock-vs-GNSS agreement (5 s) is not news', () => {
    const { clock, backoff, fail } = setUp();
    fail('PLATFORM_TLS_CLOCK');
    clock.setWall(clock.wallMs() + 4000);
    expect(() => backoff.check(clock.monotonicMs())).toThrow(/token service failed/);
    backoff.stop();
    expect(clock.nextTimerAt()).toBeUndefined();
  });
});
