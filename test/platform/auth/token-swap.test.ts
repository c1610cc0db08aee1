import { describe, expect, it } from 'vitest';
import { Secret } from '../../../src/config/secret.js';
import { silentLogger } from '../../../src/log.js';
import { AuthorizedClient } from '../../../src/platform/auth/authorized-client.js';
import { TokenManager } from '../../../src/platform/auth/token-manager.js';
import { StoreHandle } from '../../../src/store/store-handle.js';
import { openStores } from '../../../src/store/stores.js';
import { startPlatform, TEST_TUNING } from '../fixture.js';

const HOUR = 3_600_000;

/**
 * The token manager outlives a swap of the database (store-handle.ts). While detached its records
 * refuse with STORE_RESTARTING; a renewal due then must not read that as "no stored pair" and use
 * the password (spec: only a rejected refresh allows it), and the refresh token it holds is kept.
 */
describe('a token renewal due while the store handle is detached', () => {
  it('waits for the store instead of a password grant, then refreshes with the pair it held', async () => {
    const p = await startPlatform({ accessTtlS: 3600 });
    const handle = new StoreHandle(silentLogger());
    const db = p.openDb();
    handle.attach(db, openStores(db));
    const tokens = new TokenManager({
      records: handle.stores.tokens,
      http: p.http,
      authUrl: p.urls.authUrl,
      credentials: { username: 'agent', password: new Secret('pw') },
      clock: p.clock,
      bootClock: p.boot,
      logger: silentLogger(),
      tuning: TEST_TUNING,
      random: () => 0.5,
    });
    const client = new AuthorizedClient({ http: p.http, tokens, logger: silentLogger() });
    const get = () => client.send({ method: 'GET', url: p.urls.deviceUrl });
    expect((await get()).status).toBe(200);
    expect(p.sim.stats.passwordGrants).toBe(1);

    // A salvage detaches the store; the token falls due meanwhile.
    handle.pause();
    db.close();
    p.clock.advance(HOUR);
    await get().then(
      () => undefined,
      (e: unknown) => expect(e).toMatchObject({ errorClass: 'transient' }),
    );
    await tokens.maintain();
    expect(p.sim.stats.passwordGrants).toBe(1);

    // The salvaged file holds no token row; the pair in use goes in and is refreshed, no password.
    const next = p.openDb();
    handle.attach(next, openStores(next));
    tokens.storeHeldPair();
    expect((await get()).status).toBe(200);
    expect(p.sim.stats).toMatchObject({ passwordGrants: 1, refreshes: 1, refreshReuses: 0 });
    await tokens.stop();
  });
});
