import type { Database } from 'better-sqlite3';
import type { Config } from '../../config/load.js';
import type { Logger } from '../../log.js';
import type { Clock } from '../../system/clock.js';
import { Ballast } from '../ballast.js';
import { FullDisk } from '../full-disk.js';
import type { MetaStore } from '../meta.js';
import { OutboxBound } from './bound.js';

export interface OutboxOptions {
  db: Database;
  meta: MetaStore;
  /** Identity the event ids are made from; known before registration (the device identity record). */
  identity: { externalSystemId: string; externalDeviceId: string };
  storage: Config['storage'];
  dataDir: string;
  clock: Clock;
  logger: Logger;
  /** Free bytes of the data directory's file system; injected by tests. */
  freeBytes?: (dir: string) => number;
  /** How often the free-disk floor is checked. */
  diskCheckIntervalMs?: number;
  /** The full-disk state shared with the other writers of this database (agent.ts); default one without ballast. */
  fullDisk?: FullDisk;
  /** Written with the minute's counters, in the same transaction (the platform data counter). */
  persistWithCounters?: (meta: MetaStore) => void;
}

/** The outbox bound from storage.maxFixes and the storage.minFreeBytes floor. */
export function outboxBound(o: OutboxOptions): OutboxBound {
  return new OutboxBound({
    maxFixes: o.storage.maxFixes,
    minFreeBytes: o.storage.minFreeBytes,
    dataDir: o.dataDir,
    clock: o.clock,
    logger: o.logger,
    meta: o.meta,
    ...(o.freeBytes ? { freeBytes: o.freeBytes } : {}),
    ...(o.diskCheckIntervalMs !== undefined ? { checkIntervalMs: o.diskCheckIntervalMs } : {}),
  });
}

/** The full-disk state given, or one of the outbox's own without ballast. */
export function outboxFullDisk(o: OutboxOptions): FullDisk {
  return (
    o.fullDisk ??
    new FullDisk({
      ballast: new Ballast({ dataDir: o.dataDir, bytes: 0, logger: o.logger }),
      dataDir: o.dataDir,
      clock: o.clock,
      logger: o.logger,
      ...(o.freeBytes ? { freeBytes: o.freeBytes } : {}),
    })
  );
}
