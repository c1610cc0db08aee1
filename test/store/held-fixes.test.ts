import { describe, expect, it } from 'vitest';
import { MAX_WAITING_FIXES, StoreQueue } from '../../src/store/store-queue.js';
import { captureLogger } from '../helpers/capture-logger.js';
import { storeHeld } from '../../src/store/held.js';
import { tempDir } from '../helpers/tmp.js';
import { fixAt, openOutbox, rowCount } from './outbox/helpers.js';

/**
 * What a daemon held while its card was read-only goes into the file once it is
 * writable: the committed rows delivered meanwhile are deleted, the held fixes inserted after the
 * newest row with their event ids, and the fixes recorded while the store restarts wait in the
 * store handle's queue.
 */
describe('storing what was held on a read-only card into the database', () => {
  it('deletes the delivered rows and stores the held fixes, delivered ones excepted, with their event ids, in one transaction', async () => {
    const dir = tempDir();
    const { db, outbox } = await openOutbox(dir);
    for (let i = 0; i < 10; i++) outbox.record(fixAt(i));
    outbox.flush({ final: true });
    db.pragma('query_only = ON');
    for (let i = 10; i < 20; i++) outbox.record(fixAt(i));
    outbox.flush();
    expect(outbox.status().buffered).toBe(10);
    // Delivered meanwhile: two committed rows, one held fix.
    const [c1, c2] = outbox.after(0, 2);
    outbox.delivered(c1!);
    outbox.delivered(c2!);
    const heldEntries = outbox.after(10, 10);
    outbox.delivered(heldEntries[0]!);
    const held = outbox.takeHeld();
    db.pragma('query_only = OFF');

    const stored = storeHeld(db, held);
    expect(stored).toEqual({ deleted: 2, inserted: 9 });
    expect(rowCount(db)).toBe(17);
    const ids = (db.prepare('SELECT hex(event_id) AS id FROM outbox ORDER BY seq').all() as { id: string }[]).map((r) => r.id);
    expect(new Set(ids).size).toBe(17);
    const times = (db.prepare('SELECT fix_time AS t FROM outbox ORDER BY seq').all() as { t: number }[]).map((r) => r.t);
    expect(times).toEqual([...Array(20).keys()].filter((i) => i > 1 && i !== 10).map((i) => fixAt(i).time));
    db.close();
  });

  it('the queue keeps the fixes and events recorded while no outbox is attached and gives them to the next one first, in order, an event with its state', async () => {
    const first = await openOutbox(tempDir());
    const queue = new StoreQueue(captureLogger().logger);
    queue.resume(first.outbox);
    queue.record(fixAt(0));
    queue.pause();
    first.outbox.takeHeld();
    first.db.close();
    queue.record(fixAt(1));
    const event = { eventType: 'stopMovingEvent' as const, time: fixAt(2).time, lat: 52, lon: 5, odometerM: 1200 };
    queue.recordEvent(event, { key: 'motion', value: { state: 'stopped' } });
    queue.record(fixAt(3));
    const second = await openOutbox(tempDir());
    queue.resume(second.outbox);
    await second.outbox.stop();
    const times = (second.db.prepare('SELECT fix_time AS t FROM outbox ORDER BY seq').all() as { t: number }[]).map((r) => r.t);
    expect(times).toEqual([1, 2, 3].map((i) => fixAt(i).time));
    expect(second.meta.getJson('motion')).toEqual({ state: 'stopped' });
    expect(queue.dropped).toBe(0);
    second.db.close();
  });

  it('the queue says at attach how many fixes did not fit while no outbox took them, once', async () => {
    const log = captureLogger();
    const queue = new StoreQueue(log.logger);
    for (let i = 0; i < MAX_WAITING_FIXES + 7; i++) queue.record(fixAt(i));
    expect(queue.dropped).toBe(7);
    const o = await openOutbox(tempDir(), { storage: { maxFixes: 100_000, commitMaxFixes: 100_000 } });
    queue.resume(o.outbox);
    expect(o.outbox.status().pending).toBe(MAX_WAITING_FIXES);
    queue.pause();
    queue.resume(o.outbox);
    const lines = log
      .text()
      .split('\n')
      .filter((l) => l.includes('fixes dropped while the store restarted'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/"dropped":7/);
    await o.outbox.stop();
    o.db.close();
  });
});
