import { describe, expect, it } from 'vitest';
import { PlatformError } from '../../src/errors.js';
import { errorFromNetwork } from '../../src/platform/transport/http-errors.js';
import { assessHealth } from '../../src/status/health.js';
import { liveSnapshot } from './fixtures.js';

/** Issue 22.8: a TLS validity failure with the clock at 1970 is the clock, not the CA file. */
describe('a wrong system clock is named, not blamed on the CA file', () => {
  it('CERT_NOT_YET_VALID: PLATFORM_TLS_CLOCK, transient, the clock named; no platform.caFile advice', () => {
    const cause = Object.assign(new Error('certificate is not yet valid'), { code: 'CERT_NOT_YET_VALID' });
    const e = errorFromNetwork(cause, 'device registration', 'https://platform.example/api', false, 5000);
    expect(e).toBeInstanceOf(PlatformError);
    expect(e.code).toBe('PLATFORM_TLS_CLOCK');
    expect(e.errorClass).toBe('transient');
    expect(e.message).toMatch(
      /^device registration: the TLS certificate of platform\.example is not yet valid by this system's clock \(CERT_NOT_YET_VALID, clock says /,
    );
    expect(e.message).not.toMatch(/caFile/);
  });

  it('status: FAILING "system clock behind GNSS by 20782 d: TLS certificate checks fail until it is set"', () => {
    const s = liveSnapshot(Date.now(), '/var/lib/telematics-agent');
    s.receiver!.clockOffsetS = -20_782 * 86_400;
    s.upload.lastError = { code: 'PLATFORM_TLS_CLOCK', message: 'x', class: 'transient', at: Date.now() } as never;
    const h = assessHealth(s);
    expect(h.level).toBe('failing');
    expect(h.reasons[0]).toBe('system clock behind GNSS by 20782 d: TLS certificate checks fail until it is set');
  });
});
