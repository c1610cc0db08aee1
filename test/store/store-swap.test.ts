import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { insertHeldRows } from '../../src/store/held.js';
import { openDatabase } from '../../src/store/database.js';
import { MetaStore } from '../../src/store/meta.js';
import { StoreHandle } from '../../src/store/store-handle.js';
import { startPlatform } from '../platform/fixture.js';
import { DEVICE } from '../upload/harness.js';
import { tempDir } from '../helpers/tmp.js';
import { attachOutbox, attachOutboxOn, startSwapUploader } from './swap-rig.js';
import { waitFor } from '../helpers/wait.js';
import { fixAt, rowCount } from './outbox/helpers.js';

/**
 * The store handle swapped under one running uploader (the real simulator and token manager, real
 * database files): the uploader is never rebuilt, answers to entries of the older database are
 * matched by event id, and an event recorded while detached is committed with its state and
 * delivered once.
 */
describe('a swap of the database under one uploader', () => {
  it('held fixes numbered like the next file rows: nothing deleted that was not delivered, every fix and the detached event delivered once', async () => {
    const platform = await startPlatform({}, {});
    platform.sim.setFaults('events', { latencyMs: 150 });
    const handle = new StoreHandle(silentLogger());
    const outboxOn = (dir: string) => attachOutboxOn(handle, dir);
    // The file: 30 fixes queued, seqs 1..30, written while the card was still writable.
    const fileDir = tempDir();
    const seed = await outboxOn(fileDir);
    for (let i = 0; i < 30; i++) seed.outbox.record(fixAt(i));
    seed.outbox.flush({ final: true });
    handle.pause();
    seed.outbox.takeHeld();
    seed.db.close();

    // A copy that does not hold the file (too large to read): held fixes from seq 1 on.
    const copy = await outboxOn(tempDir());
    const { uploader, registration } = await startSwapUploader(handle, platform);
    for (let i = 100; i < 120; i++) handle.queue.record(fixAt(i));
    registration.register(DEVICE);
    await waitFor('some held fixes delivered, some in flight', () => platform.sim.events.size >= 5 && uploader.status().inFlight > 0);

    // The swap, with answers still in flight: takeHeld, what the copy held stored into the file.
    handle.pause();
    const held = copy.outbox.takeHeld();
    copy.db.close();
    const event = { eventType: 'stopMovingEvent' as const, time: fixAt(200).time, lat: 52, lon: 5, odometerM: 4321 };
    const state = { movement: 'stopped', odometerM: 4321 };
    handle.queue.recordEvent(event, { key: 'motion.test', value: state });
    const file = openDatabase({ dataDir: fileDir, logger: silentLogger() });
    insertHeldRows(
      file,
      held.rows.filter((r) => !held.delivered.has(Buffer.from(r.event_id).toString('hex'))),
    );
    const back = await attachOutbox(handle, file, fileDir);

    const all = 30 + 20;
    await waitFor(
      'everything delivered',
      () => platform.sim.events.size >= all && platform.sim.vehicleEvents.size >= 1 && back.pendingCount() === 0,
      {
        timeoutMs: 60_000,
      },
    );
    back.flush({ final: true });
    expect(platform.sim.events.size).toBe(all);
    expect(platform.sim.stats.duplicates).toBe(0);
    expect([...platform.sim.vehicleEvents.values()].map((r) => r.deliveries)).toEqual([1]);
    expect(new MetaStore(file).getJson('motion.test')).toEqual(state);
    // Every row left was never delivered: none (all arrived, each once).
    expect(rowCount(file)).toBe(0);
    await uploader.stop(100);
    await back.stop();
    file.close();
  });
});
