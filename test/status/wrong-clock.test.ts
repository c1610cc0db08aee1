import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PlatformError } from '../../src/errors.js';
import { errorFromNetwork } from '../../src/platform/transport/http-errors.js';
import { assessHealth } from '../../src/status/health.js';
import { renderStatus } from '../../src/terminal/status-screen.js';
import { liveSnapshot, seedDatabase } from './fixtures.js';
import { databaseSnapshot } from '../../src/status/database-snapshot.js';
import { tempDir } from '../helpers/tmp.js';
import { daysSincePattern } from '../helpers/days.js';

const DAY_MS = 86_400_000;
const certError = (code: string): Error => Object.assign(new Error('certificate dates'), { code });

/** A TLS validity failure with the clock at 1970 is the clock, not the CA file. */
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

  it('with GNSS time known, the error says the clock is wrong and by how much', () => {
    const wallMs = Date.UTC(1970, 0, 1, 0, 1);
    const e = errorFromNetwork(certError('CERT_NOT_YET_VALID'), 'device registration', 'https://platform.example/api', false, 5000, {
      wallMs,
      offsetMs: -20_782 * DAY_MS,
    });
    expect(e.code).toBe('PLATFORM_TLS_CLOCK');
    expect(e.errorClass).toBe('transient');
    expect(e.message).toContain(
      'the system clock is 20782 d (56.9 years) behind GNSS time (clock says 1970-01-01T00:01:00.000Z, GNSS 2026-',
    );
    expect(e.message).toContain('so it is the clock, not the CA or the configuration');
    const ahead = errorFromNetwork(certError('CERT_HAS_EXPIRED'), 'password grant', 'https://platform.example/api', false, 5000, {
      wallMs: Date.UTC(2028, 10, 26),
      offsetMs: 730 * DAY_MS,
    });
    expect(ahead.message).toMatch(
      /is expired by this system's clock \(CERT_HAS_EXPIRED\): the system clock is 730 d \(2\.0 years\) ahead of GNSS time/,
    );
  });

  it("with the clock agreeing with GNSS, an expired certificate is the platform's, not the clock's", () => {
    const e = errorFromNetwork(certError('CERT_HAS_EXPIRED'), 'event upload', 'https://platform.example/api', false, 5000, {
      wallMs: Date.UTC(2026, 10, 26),
      offsetMs: 1200,
    });
    expect(e.code).toBe('PLATFORM_TLS');
    expect(e.errorClass).toBe('transient');
    expect(e.message).toMatch(/agrees with GNSS time .*the platform's certificate is out of date/);
  });

  it('booted at 1970 with a success stored from before: the error of this run is current (it was DEGRADED by wall stamps)', () => {
    const now = Date.UTC(1970, 0, 1, 0, 2);
    const s = liveSnapshot(now, '/var/lib/telematics-agent');
    s.receiver!.clockOffsetS = -20_782 * 86_400;
    // The stored success (wall 2026, from before this start) is "after" this run's error by wall stamps.
    s.upload = {
      lastSuccessAt: Date.UTC(2026, 10, 25),
      lastError: { code: 'PLATFORM_TLS_CLOCK', class: 'transient', message: 'x', at: now - 10_000, ageS: 10 },
    };
    const h = assessHealth(s);
    expect(h.level).toBe('failing');
    expect(h.reasons).toContain('system clock behind GNSS by 20782 d: TLS certificate checks fail until it is set');
    const text = renderStatus(s, { color: false, nowMs: now });
    expect(text).toMatch(/last success 20782 d in the future by the host clock \(the clock was set back since, or is wrong now\)/);
    expect(text).toMatch(/last error PLATFORM_TLS_CLOCK \(transient\) 10 s ago/);
    expect(text).not.toMatch(/last success 0 s ago/);
  });

  it('after the clock was set from 1970 to now: ages on the monotonic clock, the old error no longer current', () => {
    const now = Date.UTC(2026, 10, 26, 12);
    const s = liveSnapshot(now, '/var/lib/telematics-agent');
    s.receiver!.clockOffsetS = 0.4;
    s.upload = {
      lastSuccessAt: now - 5000,
      lastSuccessAgeS: 5,
      lastError: { code: 'PLATFORM_TLS_CLOCK', class: 'transient', message: 'x', at: Date.UTC(1970, 0, 1, 0, 1), ageS: 70 },
    };
    expect(assessHealth(s).reasons.join('; ')).not.toMatch(/upload failing|clock/);
    const text = renderStatus(s, { color: false, nowMs: now });
    expect(text).toMatch(/last success 5 s ago\n/);
    expect(text).toMatch(/last error PLATFORM_TLS_CLOCK \(transient\) 70 s ago/);
    expect(text).not.toMatch(/20782 d/);
  });

  it("no fix yet: a token refused by the certificate's dates is FAILING, said as the clock", () => {
    const s = liveSnapshot(Date.now(), '/var/lib/telematics-agent');
    delete s.receiver!.clockOffsetS;
    s.token = { state: 'none', passwordGrants: 0, refreshes: 0, lastError: { code: 'PLATFORM_TLS_CLOCK', message: 'x' } };
    const h = assessHealth(s);
    expect(h.level).toBe('failing');
    expect(h.reasons[0]).toMatch(
      /^TLS refuses the platform's certificate by the system clock's date \(PLATFORM_TLS_CLOCK\): set the clock/,
    );
  });

  it("the link failing on the certificate's dates is FAILING with the offset, said once", () => {
    const s = liveSnapshot(Date.now(), '/var/lib/telematics-agent');
    s.receiver!.clockOffsetS = 730 * 86_400;
    s.platform = { failing: { message: 'device registration: ...', since: Date.now(), forS: 30, code: 'PLATFORM_TLS_CLOCK' } };
    const h = assessHealth(s);
    expect(h.level).toBe('failing');
    expect(h.reasons[0]).toBe('system clock ahead of GNSS by 730 d: TLS certificate checks fail until it is set');
    expect(h.reasons.join('; ')).not.toMatch(/platform not answering/);
  });

  it('daemon down, host clock at 1970: no token or backlog age, said why; a success in the future said so', () => {
    const dir = tempDir('ta-clock-db-');
    const dataDir = path.join(dir, 'data');
    mkdirSync(dataDir);
    const wrote = Date.now();
    seedDatabase(dataDir, wrote);
    const at1970 = Date.UTC(1970, 0, 1, 0, 1);
    const s = databaseSnapshot({ dataDir, wallMs: at1970 });
    expect(s.token?.ageS).toBeUndefined();
    expect(s.outbox.oldestPendingAgeS).toBeUndefined();
    expect(s.notes).toContain(
      'no age for the token or the oldest waiting fix: the host clock (1970-01-01T00:01:00.000Z) is before it; the clock is behind or was set back',
    );
    s.upload.lastSuccessAt = wrote - 1000;
    const text = renderStatus(s, { color: false, nowMs: at1970 });
    expect(text).toMatch(new RegExp(`last success ${daysSincePattern(at1970, wrote)} d in the future by the host clock`));
    expect(text).not.toMatch(/\b0 s (ago|old)/);
  });
});
