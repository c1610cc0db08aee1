import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { StoreHandle } from '../../src/store/store-handle.js';
import { tempDir } from '../helpers/tmp.js';
import { attachOutboxOn } from './swap-rig.js';
import { fixAt } from './outbox/helpers.js';

/**
 * A first salvage whose damaged file cannot answer the outbox's status: status is asked exactly
 * while the store restarts, so the handle's view answers from what the queue holds, never throws.
 */
describe('the outbox view while detached', () => {
  it('answers with what waits in the queue when the damaged outbox gave no figures', async () => {
    const handle = new StoreHandle(silentLogger());
    const dir = tempDir();
    const { db, outbox } = await attachOutboxOn(handle, dir);
    // The file stops answering (as a damaged one does): its status throws at the detach.
    db.close();
    expect(() => outbox.status()).toThrow();
    handle.pause();
    handle.queue.record(fixAt(1));
    handle.queue.record(fixAt(2));
    const event = { eventType: 'stopMovingEvent' as const, time: fixAt(3).time, lat: 52, lon: 5, odometerM: 1 };
    handle.queue.recordEvent(event);

    expect(handle.outbox.status()).toMatchObject({ pending: 3, sentTotal: 0, deadLetters: 0 });
    expect(handle.outbox.pendingCount()).toBe(3);
    expect(handle.outbox.oldestPendingAgeMs()).toBe(0);
    expect(handle.outbox.commitState()).toMatchObject({ lowDisk: false });
  });
});
