import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { storeHeld } from '../../src/store/held.js';
import { openDatabase } from '../../src/store/database.js';
import { MetaStore } from '../../src/store/meta.js';
import { StoreHandle } from '../../src/store/store-handle.js';
import { tempDir } from '../helpers/tmp.js';
import { attachOutboxOn } from './swap-rig.js';
import { fixAt } from './outbox/helpers.js';

/**
 * A movement event whose commit failed (the file refusing, as a damaged page or a read-only card
 * does) is taken with the fixes and stored into the next database: the motion state that made
 * it goes in with it, or a restart reads the state of before the event and makes it a second time.
 */
describe('a vehicle event taken uncommitted at a swap', () => {
  it('its state goes into the next database with the event, in one transaction', async () => {
    const handle = new StoreHandle(silentLogger());
    const outboxOn = (dir: string) => attachOutboxOn(handle, dir);
    const first = await outboxOn(tempDir());
    first.db.pragma('query_only = ON');
    const event = { eventType: 'stopMovingEvent' as const, time: fixAt(10).time, lat: 52, lon: 5, odometerM: 4321 };
    const state = { movement: 'stopped', odometerM: 4321 };
    handle.queue.recordEvent(event, { key: 'motion.test', value: state });
    expect(first.outbox.pendingCount()).toBe(1);

    // The swap as store-swap.ts makes it: pause, takeHeld, close; the held rows into the next file.
    const parts = handle.pause()!;
    const held = parts.outbox!.takeHeld();
    first.db.close();
    expect(held.rows).toHaveLength(1);
    const dir = tempDir();
    const file = openDatabase({ dataDir: dir, logger: silentLogger() });
    storeHeld(file, held);
    file.close();
    const next = await outboxOn(dir);
    next.outbox.flush({ final: true });
    expect(new MetaStore(next.db).getJson('motion.test')).toEqual(state);
    await next.outbox.stop();
    next.db.close();
  });
});
