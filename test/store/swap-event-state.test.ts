import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { carryOver } from '../../src/store/carried-fixes.js';
import { openDatabase } from '../../src/store/database.js';
import { MetaStore } from '../../src/store/meta.js';
import { Outbox } from '../../src/store/outbox/outbox.js';
import { StoreHandle } from '../../src/store/store-handle.js';
import { openStores } from '../../src/store/stores.js';
import { systemClock } from '../../src/system/clock.js';
import { tempDir } from '../helpers/tmp.js';
import { defaultStorage, fixAt, IDENTITY } from './outbox/helpers.js';

/**
 * A movement event whose commit failed (the file refusing, as a damaged page or a read-only card
 * does) is released with the fixes and carried into the next database: the motion state that made
 * it goes in with it, or a restart reads the state of before the event and makes it a second time.
 */
describe('a vehicle event released uncommitted at a swap', () => {
  it('its state is committed by the next outbox, with the event', async () => {
    const handle = new StoreHandle(silentLogger());
    const outboxOn = async (dir: string) => {
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
    };
    const first = await outboxOn(tempDir());
    first.db.pragma('query_only = ON');
    const event = { eventType: 'stopMovingEvent' as const, time: fixAt(10).time, lat: 52, lon: 5, odometerM: 4321 };
    const state = { movement: 'stopped', odometerM: 4321 };
    handle.queue.recordEvent(event, () => handle.stores.meta.setJson('motion.test', state));
    expect(first.outbox.pendingCount()).toBe(1);

    // The swap as agent.ts makes it: detach, release, close; the held rows into the next file.
    const parts = handle.detach()!;
    const carry = handle.release(parts)!;
    first.db.close();
    expect(carry.held).toHaveLength(1);
    const dir = tempDir();
    const file = openDatabase({ dataDir: dir, logger: silentLogger() });
    carryOver(file, carry.held);
    file.close();
    const next = await outboxOn(dir);
    next.outbox.flush({ final: true });
    expect(new MetaStore(next.db).getJson('motion.test')).toEqual(state);
    await next.outbox.stop();
    next.db.close();
  });
});
