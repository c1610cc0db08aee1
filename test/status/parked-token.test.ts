import { describe, expect, it } from 'vitest';
import { assessHealth } from '../../src/status/health.js';
import { renderStatus } from '../../src/terminal/status-screen.js';
import { liveSnapshot } from './fixtures.js';

const NOW = Date.UTC(2026, 10, 23, 3, 0, 0);

describe('status of a vehicle parked for hours: the access token lapsed and waits for the next heartbeat', () => {
  const parked = liveSnapshot(NOW, '/var/lib/telematics-agent', (s) => {
    s.token = { state: 'expired', ageS: 2.9 * 3600, renewal: 'next-request', passwordGrants: 1, refreshes: 14 };
  });

  it('says so on a line of its own, every row within 80 columns, and HEALTHY', () => {
    const text = renderStatus(parked, { nowMs: NOW, color: false });
    expect(text).toMatch(/^token\s+expired, 2\.9 h old\s+password grants 1\s+refreshes 14$/m);
    expect(text).toMatch(/^ {10}renewed at the next request \(none lately: parked\)$/m);
    for (const l of text.split('\n')) if (!/^( {10}|! )/.test(l)) expect(l.length, l).toBeLessThanOrEqual(80);
    expect(assessHealth(parked).level).toBe('healthy');
  });

  it('a token that lapsed while requests used it (renewal ahead) is still a finding', () => {
    const lapsed = liveSnapshot(NOW, '/var/lib/telematics-agent', (s) => {
      s.token = { state: 'expired', ageS: 3700, renewal: 'ahead', passwordGrants: 1, refreshes: 2 };
    });
    expect(assessHealth(lapsed).reasons).toContain('token expired');
    expect(renderStatus(lapsed, { nowMs: NOW, color: false })).not.toMatch(/renewed at the next request/);
  });
});
