import type { Database } from '../../src/store/database.js';
import { silentLogger } from '../../src/log.js';
import { openDatabase } from '../../src/store/database.js';
import { MetaStore } from '../../src/store/meta.js';
import { Outbox } from '../../src/store/outbox/outbox.js';
import type { StoreHandle } from '../../src/store/store-handle.js';
import { openStores } from '../../src/store/stores.js';
import { systemClock } from '../../src/system/clock.js';
import { defaultStorage, IDENTITY } from './outbox/helpers.js';

/**
 * A database in `dir` opened and attached to `handle` with its record stores and a started outbox,
 * as the agent's open of its store does (commits only when a test flushes: a 60 s interval).
 */
export async function attachOutboxOn(handle: StoreHandle, dir: string): Promise<{ db: Database; outbox: Outbox }> {
  const db = openDatabase({ dataDir: dir, logger: silentLogger() });
  const outbox = new Outbox({
    db,
    meta: new MetaStore(db),
    identity: IDENTITY,
    dataDir: dir,
    clock: systemClock,
    logger: silentLogger(),
    freeBytes: () => Number.MAX_SAFE_INTEGER,
    storage: { ...defaultStorage(), commitIntervalMs: 60_000 },
  });
  await outbox.start();
  handle.attach(db, openStores(db));
  handle.attachOutbox(outbox);
  return { db, outbox };
}
