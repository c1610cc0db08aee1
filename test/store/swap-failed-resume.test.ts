import { describe, expect, it, onTestFinished } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { Ballast } from '../../src/store/ballast.js';
import { FullDisk } from '../../src/store/full-disk.js';
import { StoreHandle } from '../../src/store/store-handle.js';
import { StoreSwap, type OutboxPeers } from '../../src/store/store-swap.js';
import { systemClock } from '../../src/system/clock.js';
import { tempDir } from '../helpers/tmp.js';
import { defaultStorage, fixAt, IDENTITY, rowCount } from './outbox/helpers.js';

/** A platform side whose identity the outbox can or cannot get (a resume that fails half-way). */
function peers(fail: { now: boolean }): OutboxPeers {
  return {
    platform: {
      registrar: {
        identity: () => (fail.now ? Promise.reject(new Error('the records are busy')) : Promise.resolve(IDENTITY)),
        storeHeld: () => undefined,
      },
      tokens: { storeHeldPair: () => undefined },
    },
    persistWithCounters: () => undefined,
  };
}

describe('a swap whose resume fails', () => {
  it('the fixes the read-only copy was to hold are stored at the next open, not dropped', async () => {
    const dataDir = tempDir('ta-swap-fail-');
    const logger = silentLogger();
    const handle = new StoreHandle(logger);
    const fullDisk = new FullDisk({
      ballast: new Ballast({ dataDir, bytes: 0, logger }),
      dataDir,
      clock: systemClock,
      logger,
    });
    const swap = new StoreSwap({
      handle,
      fullDisk,
      storage: { ...defaultStorage(), commitIntervalMs: 60_000 },
      dataDir,
      clock: systemClock,
      logger,
      storeLogger: logger,
      onProgress: () => undefined,
      onStores: () => undefined,
      onDamage: () => undefined,
      onOpen: () => undefined,
    });
    onTestFinished(() => swap.stop());
    const fail = { now: false };
    swap.open();
    swap.attach();
    await swap.resume(peers(fail));
    // 25 fixes only in the outbox's memory (its 60 s commit has not come).
    for (let i = 0; i < 25; i++) handle.queue.record(fixAt(i));

    // A swap to the read-only copy whose outbox cannot be built.
    swap.pause();
    swap.takeHeld();
    swap.close();
    expect(swap.heldCount).toBe(25);
    swap.next = { readOnlyAgain: true };
    swap.open();
    swap.attach();
    fail.now = true;
    await expect(swap.resume()).rejects.toThrow(/busy/);

    // The supervisor's next attempt: the file, with what was held stored into it.
    swap.pause();
    swap.takeHeld();
    swap.close();
    expect(swap.heldCount).toBe(25);
    fail.now = false;
    swap.open();
    swap.attach();
    await swap.resume();
    expect(rowCount(handle.parts!.db)).toBe(25);
  });
});
