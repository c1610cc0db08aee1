import { onTestFinished } from 'vitest';
import { configSchemas } from '../../src/config/schema.js';
import type { Database } from '../../src/store/database.js';
import { silentLogger } from '../../src/log.js';
import { openDatabase } from '../../src/store/database.js';
import { MetaStore } from '../../src/store/meta.js';
import { Outbox } from '../../src/store/outbox/outbox.js';
import type { StoreHandle } from '../../src/store/store-handle.js';
import { openStores } from '../../src/store/stores.js';
import { systemClock } from '../../src/system/clock.js';
import { Uploader } from '../../src/upload/uploader.js';
import type { Platform } from '../platform/fixture.js';
import { TestRegistration } from '../upload/harness.js';
import { defaultStorage, IDENTITY } from './outbox/helpers.js';

/**
 * A database in `dir` opened and attached to `handle` with its record stores and a started outbox,
 * as the agent's open of its store does (commits only when a test flushes: a 60 s interval).
 */
export async function attachOutboxOn(handle: StoreHandle, dir: string): Promise<{ db: Database; outbox: Outbox }> {
  const db = openDatabase({ dataDir: dir, logger: silentLogger() });
  return { db, outbox: await attachOutbox(handle, db, dir) };
}

/** attachOutboxOn for a database already open (one a test has written into first). */
export async function attachOutbox(handle: StoreHandle, db: Database, dir: string): Promise<Outbox> {
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
  handle.resume(outbox);
  return outbox;
}

/**
 * One uploader on the handle's queue against the test platform, started and stopped when the test
 * finishes (upload retries after 100 ms to 1 s); the device registers when the test says.
 */
export async function startSwapUploader(
  handle: StoreHandle,
  platform: Platform,
): Promise<{ uploader: Uploader; registration: TestRegistration }> {
  const registration = new TestRegistration();
  const uploader = new Uploader({
    queue: handle.queue,
    requester: platform.agent().client,
    registration,
    eventsUrl: `${platform.urls.planningUrl}/otm/api/v5/events`,
    upload: { ...configSchemas().configSchema.shape.upload.parse({}), minBackoffMs: 100, maxBackoffMs: 1000 },
    clock: systemClock,
    logger: silentLogger(),
  });
  await uploader.start();
  onTestFinished(() => uploader.stop(100));
  return { uploader, registration };
}
