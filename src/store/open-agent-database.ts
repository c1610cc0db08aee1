import type { Logger } from '../log.js';
import { nearestReadOnly } from '../system/data-dir-fault.js';
import { storeHeld, type HeldFixes } from './held.js';
import { openDatabase, replaceDamagedDatabase, type Database, type OpenDatabaseOptions } from './database.js';
import { openReadOnlyDatabase } from './read-only-copy.js';

/**
 * The daemon's database at each start of its store (agent-store.ts): the card's file read-write, a
 * damaged one salvaged, or, on a card that is read-only, a read-only copy
 * in memory; after a read-only spell, what was held in memory is stored into the file.
 */
export interface AgentDatabase {
  db: Database;
  /** The card is read-only: db is a copy, and the agent waits for the card to take writes. */
  readOnly: boolean;
}

export function openAgentDatabase(
  options: OpenDatabaseOptions,
  storeLogger: Logger,
  then: { repair?: { reason: string; carry?: HeldFixes }; carry?: HeldFixes; stayReadOnly?: boolean },
): AgentDatabase {
  const { repair, carry } = then;
  // stayReadOnly: storing what was held failed on a writable card; the copy again, retried later (agent.ts).
  if (then.stayReadOnly || (!repair && !carry && nearestReadOnly(options.dataDir) !== undefined)) {
    const copy = openReadOnlyDatabase(options.dataDir, storeLogger);
    if (then.stayReadOnly) {
      storeLogger.error(
        { dataDir: options.dataDir, database: copy.source === 'file' ? 'read from the card' : 'none on the card: empty' },
        'the data directory could not be taken read-write: recording into memory again (fixes held under the bound), storing everything once it can',
      );
      return { db: copy.db, readOnly: true };
    }
    storeLogger.error(
      { dataDir: options.dataDir, database: copy.source === 'file' ? 'read from the card' : 'none on the card: empty' },
      "the data directory's filesystem is read-only: recording into memory (fixes held under the bound), delivering if a token and registration are stored, storing everything once it is remounted read-write",
    );
    return { db: copy.db, readOnly: true };
  }
  const db = repair ? replaceDamagedDatabase(options, repair.reason, repair.carry) : openDatabase(options);
  if (carry) {
    const stored = storeHeld(db, carry);
    storeLogger.info(stored, 'stored the fixes held while the data directory was read-only, and deleted the ones delivered meanwhile');
  }
  return { db, readOnly: false };
}
