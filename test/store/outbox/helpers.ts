import { configSchemas } from '../../../src/config/schema.js';
import type { RecordedFix } from '../../../src/fix/fix.js';
import { silentLogger } from '../../../src/log.js';
import { openDatabase, type Database } from '../../../src/store/database.js';
import { MetaStore } from '../../../src/store/meta.js';
import { Outbox, type OutboxOptions } from '../../../src/store/outbox/outbox.js';
import { ManualClock } from '../../../src/system/clock.js';

export const T0 = Date.UTC(2026, 10, 22, 8, 0, 0);
export const IDENTITY = { externalSystemId: 'acme-tms', externalDeviceId: 'pi-0001' };

/** A plausible 10 Hz fix number i: moving east, every 50th a moving/stopped transition. */
export function fixAt(i: number, over: Partial<RecordedFix> = {}): RecordedFix {
  return {
    time: T0 + i * 100,
    mode: 3,
    lat: 52 + i * 1e-5,
    lon: 5 + i * 2e-5,
    altMSL: 3.25,
    speed: 12.5,
    track: 87.5,
    hdop: 0.8,
    satellitesUsed: 9,
    transition: i % 50 === 0,
    ...over,
  };
}

export const defaultStorage = () => configSchemas().configSchema.shape.storage.parse({});

export interface OpenOutbox {
  db: Database;
  meta: MetaStore;
  outbox: Outbox;
  clock: ManualClock;
}

/** A real database file in `dataDir` and a started outbox over it (timer commits effectively off). */
export async function openOutbox(
  dataDir: string,
  over: Partial<Omit<OutboxOptions, 'storage'>> & { storage?: Partial<OutboxOptions['storage']> } = {},
): Promise<OpenOutbox> {
  const db = openDatabase({ dataDir, logger: silentLogger() });
  const meta = new MetaStore(db);
  const clock = new ManualClock();
  const outbox = new Outbox({
    db,
    meta,
    identity: IDENTITY,
    dataDir,
    clock,
    logger: silentLogger(),
    freeBytes: () => Number.MAX_SAFE_INTEGER,
    ...over,
    storage: { ...defaultStorage(), commitIntervalMs: 60_000, ...over.storage },
  });
  await outbox.start();
  return { db, meta, outbox, clock };
}

export function rowCount(db: Database): number {
  return (db.prepare('SELECT count(*) AS n FROM outbox').get() as { n: number }).n;
}
