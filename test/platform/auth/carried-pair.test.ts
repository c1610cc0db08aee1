import { describe, expect, it } from 'vitest';
import { storeCarriedPair, UnsavedPair } from '../../../src/platform/auth/unsaved-pair.js';
import { openDatabase } from '../../../src/store/database.js';
import { MetaStore } from '../../../src/store/meta.js';
import { TokenStore } from '../../../src/store/token-store.js';
import { silentLogger } from '../../../src/log.js';
import { ManualClock } from '../../../src/system/clock.js';
import { tempDir } from '../../helpers/tmp.js';

/**
 * A pair refreshed while the card was read-only is carried into the database
 * once it is writable (agent.ts stores it before the platform is built), so the rebuilt platform does
 * not refresh with the card's older pair, whose refresh token the server already rotated away.
 */
describe('a token pair kept in memory on a read-only database, carried into it once writable', () => {
  it('keeps the pair with its generation, stamp and counts, and stores it as the newest', () => {
    const db = openDatabase({ dataDir: tempDir(), logger: silentLogger() });
    const store = new TokenStore(db, new MetaStore(db));
    const stamp = { wallMs: 1_700_000_000_000, bootId: 'boot-1', bootMs: 5_000 };
    const pair = (n: number) => ({ accessToken: `a${n}`, refreshToken: `r${n}`, tokenType: 'Bearer', expiresInS: 3600 });
    store.commit(pair(1), 1, stamp, { 'auth.passwordGrants': 1 });
    db.pragma('query_only = ON');
    const unsaved = new UnsavedPair({ store, clock: new ManualClock(), logger: silentLogger() });
    unsaved.commit({ pair: pair(2), generation: 2, receivedAtMs: 5_000 }, { ...stamp, bootMs: 9_000 }, 'auth.refreshes');
    const carried = unsaved.carried();
    expect(carried).toMatchObject({ pair: pair(2), generation: 2, stamp: { bootMs: 9_000 }, counts: { 'auth.refreshes': 1 } });
    expect(store.read()?.generation).toBe(1);

    db.pragma('query_only = OFF');
    expect(storeCarriedPair(store, carried!)).toBe(true);
    expect(store.read()).toMatchObject({ pair: { refreshToken: 'r2' }, generation: 2 });
    db.close();
  });
});
