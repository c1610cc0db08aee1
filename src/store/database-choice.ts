import type { Logger } from '../log.js';
import { nearestReadOnly } from '../system/data-dir-fault.js';
import { storeHeld, type HeldFixes } from './held.js';
import { openDatabase, replaceDamagedDatabase, type Database, type OpenDatabaseOptions } from './database.js';
import { openReadOnlyDatabase } from './read-only-copy.js';

/**
 * Which database the next open of the store takes (store-swap.ts `open`), as the supervisor decided
 * it: the damaged file salvaged, the read-only copy again after a failed recovery, or else the file
 * (or the copy, when the card is read-only), with what the outbox before held.
 */
export interface NextDatabase {
  /** The file is damaged (the SQLite code and message): salvage it into a fresh one, the held fixes after its rows. */
  salvage?: string | undefined;
  /** Storing what was held failed on a writable card: the read-only copy again, retried later. */
  readOnlyAgain?: boolean | undefined;
  /** What the outbox before held only in memory: stored into the file (on the copy, its outbox holds them). */
  held?: HeldFixes | undefined;
}

/** The database a swap opens. */
export interface OpenedDatabase {
  db: Database;
  /** The card is read-only: db is a copy, and the agent waits for the card to take writes. */
  readOnly: boolean;
}

/**
 * Opens the next database: the card's file read-write, a damaged one salvaged, or, on a card that
 * is read-only, a read-only copy in memory; after a read-only spell, what was held in memory is
 * stored into the file.
 */
export function openNextDatabase(options: OpenDatabaseOptions, storeLogger: Logger, next: NextDatabase): OpenedDatabase {
  const { salvage, held } = next;
  if (next.readOnlyAgain || (salvage === undefined && !held && nearestReadOnly(options.dataDir) !== undefined)) {
    const copy = openReadOnlyDatabase(options.dataDir, storeLogger);
    const database = copy.source === 'file' ? 'read from the card' : 'none on the card: empty';
    if (next.readOnlyAgain) {
      storeLogger.error(
        { dataDir: options.dataDir, database },
        'the data directory could not be taken read-write: recording into memory again (fixes held under the bound), storing everything once it can',
      );
      return { db: copy.db, readOnly: true };
    }
    storeLogger.error(
      { dataDir: options.dataDir, database },
      "the data directory's filesystem is read-only: recording into memory (fixes held under the bound), delivering if a token and registration are stored, storing everything once it is remounted read-write",
    );
    return { db: copy.db, readOnly: true };
  }
  if (salvage !== undefined) return { db: replaceDamagedDatabase(options, salvage, held), readOnly: false };
  const db = openDatabase(options);
  if (held) {
    const stored = storeHeld(db, held);
    storeLogger.info(stored, 'stored the fixes held while the data directory was read-only, and deleted the ones delivered meanwhile');
  }
  return { db, readOnly: false };
}
