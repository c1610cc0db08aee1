import { describe, expect, it, onTestFinished } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { StoreHandle } from '../../src/store/store-handle.js';
import { startPlatform } from '../platform/fixture.js';
import { DEVICE } from '../upload/harness.js';
import { tempDir } from '../helpers/tmp.js';
import { attachOutboxOn, startSwapUploader } from './swap-rig.js';
import { waitFor } from '../helpers/wait.js';
import { fixAt } from './outbox/helpers.js';

/**
 * An event refused before a swap comes back from the next database under a new seq: the
 * uploader's refusal still holds it, so it is not sent again before the verdict, and the verdict
 * dead-letters its row once (real simulator, real database file reopened as a salvage does).
 */
describe('a refused event across a swap of the database', () => {
  it('is sent once and dead-lettered once', async () => {
    const platform = await startPlatform({}, {});
    platform.sim.setFaults('events', { rejectEvents: 1 });
    const handle = new StoreHandle(silentLogger());
    const dir = tempDir();
    const outboxOn = () => attachOutboxOn(handle, dir);
    const first = await outboxOn();
    first.outbox.record(fixAt(1));
    first.outbox.flush({ final: true });
    const { uploader, registration } = await startSwapUploader(handle, platform);
    registration.register(DEVICE);
    // The only event is refused: no acceptance yet, so it waits for its verdict.
    await waitFor('the event refused', () => uploader.status().held === 1 && uploader.status().inFlight === 0);
    expect(platform.sim.stats.requests.events).toBe(1);

    // The swap: the same file reopened, its rows numbered in the next slot.
    const parts = handle.pause()!;
    parts.outbox!.takeHeld();
    await first.outbox.stop();
    first.db.close();
    const next = await outboxOn();
    onTestFinished(() => {
      if (next.db.open) next.db.close();
    });
    // Another fix accepted: the verdict on the refused one (it names a field) is the dead letters.
    next.outbox.record(fixAt(2));
    await waitFor(
      'the other fix delivered and the refusal judged',
      () => platform.sim.events.size === 1 && uploader.status().deadLettered >= 1,
      {
        timeoutMs: 20_000,
      },
    );
    await waitFor('nothing in flight', () => uploader.status().inFlight === 0);
    next.outbox.flush({ final: true });
    expect(platform.sim.stats.requests.events).toBe(2);
    expect(uploader.status()).toMatchObject({ deadLettered: 1, held: 0 });
    expect(next.db.prepare('SELECT count(*) AS n FROM dead_letter').get()).toEqual({ n: 1 });
    expect(next.outbox.pendingCount()).toBe(0);
    await uploader.stop(100);
    await next.outbox.stop();
    next.db.close();
  });
});
