import { describe, expect, it, onTestFinished } from 'vitest';
import { heldFromStored } from '../../../src/platform/auth/held-token.js';
import { UnsavedPair } from '../../../src/platform/auth/unsaved-pair.js';
import { openDatabase } from '../../../src/store/database.js';
import { StoreHandle } from '../../../src/store/store-handle.js';
import { openStores } from '../../../src/store/stores.js';
import { silentLogger } from '../../../src/log.js';
import { ManualClock } from '../../../src/system/clock.js';
import { tempDir } from '../../helpers/tmp.js';

/**
 * A pair refreshed while the card was read-only is kept in memory by the token manager, which the
 * swap of the store does not rebuild: once the handle holds the writable file, it goes in, so the
 * platform never refreshes with the card's older pair, whose refresh token the server rotated away.
 */
describe('a token pair kept in memory on a read-only database, stored once the store handle holds a writable one', () => {
  it('keeps the pair with its generation, stamp and counts while refused, and stores it as the newest after the swap', () => {
    const dir = tempDir();
    const db = openDatabase({ dataDir: dir, logger: silentLogger() });
    const handle = new StoreHandle(silentLogger());
    handle.attach(db, openStores(db));
    const stamp = { wallMs: 1_700_000_000_000, bootId: 'boot-1', bootMs: 5_000 };
    const pair = (n: number) => ({ accessToken: `a${n}`, refreshToken: `r${n}`, tokenType: 'Bearer', expiresInS: 3600 });
    handle.stores.tokens.commit(pair(1), 1, stamp, { 'auth.passwordGrants': 1 });
    db.pragma('query_only = ON');
    const unsaved = new UnsavedPair({ store: handle.stores.tokens, clock: new ManualClock(), logger: silentLogger() });
    unsaved.commit({ pair: pair(2), generation: 2, receivedAtMs: 5_000 }, { ...stamp, bootMs: 9_000 }, 'auth.refreshes');
    expect(unsaved.pending?.held.generation).toBe(2);
    expect(handle.stores.tokens.read()?.generation).toBe(1);

    // Detached: the records refuse (transient), the pair stays in memory.
    handle.pause();
    db.close();
    unsaved.retry(true);
    expect(unsaved.pending?.held.generation).toBe(2);

    const file = openDatabase({ dataDir: dir, logger: silentLogger() });
    handle.attach(file, openStores(file));
    unsaved.retry(true);
    expect(unsaved.pending).toBeUndefined();
    expect(handle.stores.tokens.read()).toMatchObject({ pair: { refreshToken: 'r2' }, generation: 2 });
    expect(handle.stores.meta.counter('auth.refreshes')).toBe(1);
    file.close();
  });
});

describe('the pair in use stored into a salvaged database', () => {
  it('a pair of an earlier boot, not renewed yet, goes in too (due at once when read back), so its refresh token is kept', () => {
    const dir = tempDir();
    const db = openDatabase({ dataDir: dir, logger: silentLogger() });
    onTestFinished(() => {
      db.close();
    });
    const tokens = openStores(db).tokens;
    const unsaved = new UnsavedPair({ store: tokens, clock: new ManualClock(), logger: silentLogger() });
    const pair = { accessToken: 'a7', refreshToken: 'r7', tokenType: 'Bearer', expiresInS: 3600 };
    const boot = { bootId: 'boot-2', nowMs: () => 50_000 };
    unsaved.storeInto({ pair, generation: 7, receivedAtMs: undefined }, boot);
    const stored = tokens.read();
    expect(stored).toMatchObject({ pair: { refreshToken: 'r7' }, generation: 7 });
    expect(heldFromStored(stored!, boot).receivedAtMs).toBeUndefined();
  });
});
