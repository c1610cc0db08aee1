import { describe, expect, it } from 'vitest';
import { TOKEN_IDLE_REFRESH_AGE_S, TOKEN_KEEP_FRESH_S } from '../../../src/platform/auth/renewal-timing.js';
import { startPlatform, type Platform } from '../fixture.js';

/**
 * The token renewed ahead only while requests use it (a parked vehicle renews at its next
 * heartbeat, in the same wake-up), and an idle pair renewed anyway before the refresh token's day
 * runs out. The simulator on loopback and a real SQLite file; time moves by ManualClock.advance.
 */

const MIN = 60_000;
const HOUR = 60 * MIN;
/** As build.ts sets them for the daemon. */
const DAEMON = { keepFreshS: TOKEN_KEEP_FRESH_S, idleRefreshAgeS: TOKEN_IDLE_REFRESH_AGE_S };

async function get(client: ReturnType<Platform['agent']>['client'], p: Platform): Promise<number> {
  return (await client.send({ method: 'GET', url: p.urls.deviceUrl })).status;
}

/** Advances `ms` in steps of the daemon's maintain interval (60 s), maintaining at each. */
async function idle(p: Platform, tokens: ReturnType<Platform['agent']>['tokens'], ms: number): Promise<void> {
  for (let t = 0; t < ms; t += MIN) {
    p.clock.advance(MIN);
    await tokens.maintain();
  }
}

describe('token renewal while parked', () => {
  it('parked: the lapsed token waits for the next request, and status says so without calling it a fault', async () => {
    const p = await startPlatform({ accessTtlS: 3600, refreshTtlS: 86_400 });
    const { client, tokens } = p.agent({ tuning: DAEMON });
    expect(await get(client, p)).toBe(200);
    await idle(p, tokens, 2 * HOUR);
    expect(p.sim.stats).toMatchObject({ passwordGrants: 1, refreshes: 0 });
    expect(tokens.tokenStatus()).toMatchObject({
      state: 'expired',
      renewal: 'next-request',
      idleRenewAfterMs: TOKEN_IDLE_REFRESH_AGE_S * 1000,
    });
    expect(tokens.tokenStatus().lastError).toBeUndefined();
    // The heartbeat: one refresh in the same wake-up, then the request; nothing else.
    expect(await get(client, p)).toBe(200);
    expect(p.sim.stats).toMatchObject({ passwordGrants: 1, refreshes: 1, unauthorized: 0 });
    expect(tokens.tokenStatus()).toMatchObject({ state: 'valid', renewal: 'ahead' });
  });

  it('moving (a request every minute): the token is renewed ahead, before a request finds it due', async () => {
    const p = await startPlatform({ accessTtlS: 3600 });
    const { client, tokens } = p.agent({ tuning: DAEMON });
    let renewedBy: 'maintain' | 'request' | undefined;
    for (let m = 0; m < 70 && renewedBy === undefined; m++) {
      expect(await get(client, p)).toBe(200);
      if (p.sim.stats.refreshes > 0) renewedBy = 'request';
      p.clock.advance(MIN);
      await tokens.maintain();
      if (renewedBy === undefined && p.sim.stats.refreshes > 0) renewedBy = 'maintain';
    }
    expect(renewedBy).toBe('maintain');
    expect(p.sim.stats).toMatchObject({ passwordGrants: 1, refreshes: 1 });
  });

  it('parked for a day with a heartbeat every 3 h: a refresh per heartbeat and no password grant', async () => {
    const p = await startPlatform({ accessTtlS: 3600, refreshTtlS: 86_400 });
    const { client, tokens } = p.agent({ tuning: DAEMON });
    expect(await get(client, p)).toBe(200);
    for (let h = 0; h < 8; h++) {
      await idle(p, tokens, 3 * HOUR);
      expect(await get(client, p)).toBe(200);
    }
    expect(p.sim.stats).toMatchObject({ passwordGrants: 1, refreshes: 8, refreshExpired: 0, refreshReuses: 0 });
  });

  it('parked without a fix (no heartbeat at all) for two days: the pair is renewed at its idle age, never the password', async () => {
    const p = await startPlatform({ accessTtlS: 3600, refreshTtlS: 86_400 });
    const { client, tokens } = p.agent({ tuning: DAEMON });
    expect(await get(client, p)).toBe(200);
    await idle(p, tokens, 48 * HOUR);
    // Every 6 h (the idle age), give or take the one-minute maintain step.
    expect(p.sim.stats).toMatchObject({ passwordGrants: 1, refreshes: (48 * 3600) / TOKEN_IDLE_REFRESH_AGE_S, refreshExpired: 0 });
    expect(await get(client, p)).toBe(200);
    expect(p.sim.stats).toMatchObject({ passwordGrants: 1, refreshExpired: 0 });
  });

  it('without keepFreshS (as before) an idle agent renews ahead every hour', async () => {
    const p = await startPlatform({ accessTtlS: 3600, refreshTtlS: 86_400 });
    const { client, tokens } = p.agent();
    expect(await get(client, p)).toBe(200);
    await idle(p, tokens, 3 * HOUR);
    expect(p.sim.stats.refreshes).toBe(3);
    expect(tokens.tokenStatus()).toMatchObject({ state: 'valid', renewal: 'ahead' });
    expect(tokens.tokenStatus().idleRenewAfterMs).toBeUndefined();
  });
});
