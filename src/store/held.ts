import type { Database } from 'better-sqlite3';
import type { StateWrite } from '../fix/fix.js';
import { MetaStore } from './meta.js';
import { ROW_COLUMNS, type OutboxRow } from './outbox/row.js';

/**
 * What an outbox held only in memory when its database went away (a salvage, a read-only card that
 * takes writes again), taken from it at a swap (store-swap.ts) and given to the next database.
 * Deliveries are named by event id, never by seq: a seq is only the number a row has in one
 * database, and the read-only copy in memory may not be the card's file at all (empty when the file
 * is too large or unreadable), so its held fixes are numbered from 1 again, and a seq would name an
 * undelivered row of the file.
 */
export interface HeldFixes {
  /** Recorded fixes the running agent held in memory (not committed): written after the stored ones. */
  rows: readonly OutboxRow[];
  /** Event ids (eventIdKey) of fixes delivered but not yet deleted: their rows go, held ones are not written. */
  delivered: ReadonlySet<string>;
  /**
   * The state writes that go with held rows (a vehicle event's motion state), in order: written in
   * the transaction that stores the rows, never before.
   */
  state?: readonly StateWrite[];
}

/** How a delivered event id is named: its 16 bytes as lower-case hex, as SQLite's lower(hex()) gives it. */
export function eventIdKey(id: Uint8Array): string {
  return Buffer.from(id.buffer, id.byteOffset, id.byteLength).toString('hex');
}

/** Two sets of held fixes as one: the rows in record order, the deliveries of both. */
export function mergeHeld(a: HeldFixes | undefined, b: HeldFixes | undefined): HeldFixes | undefined {
  if (!a || !b) return a ?? b;
  return {
    rows: [...a.rows, ...b.rows],
    delivered: new Set([...a.delivered, ...b.delivered]),
    state: [...(a.state ?? []), ...(b.state ?? [])],
  };
}

/** The held state writes into `db`'s meta (the last of each key), inside the caller's transaction. */
export function writeHeldState(db: Database, held: HeldFixes): number {
  const last = new Map<string, unknown>();
  for (const w of held.state ?? []) last.set(w.key, w.value);
  const meta = new MetaStore(db);
  for (const [key, value] of last) meta.setJson(key, value);
  return last.size;
}

/** The held rows not delivered meanwhile. */
export function undelivered(held: HeldFixes): OutboxRow[] {
  return held.rows.filter((r) => !held.delivered.has(eventIdKey(r.event_id)));
}

/**
 * The seqs in `db`'s outbox of the delivered event ids: one scan of the table whatever the number
 * of ids (SQLite builds a transient index for the IN list), as the event id has no index of its own.
 */
export function seqsOfEventIds(db: Database, ids: ReadonlySet<string>): number[] {
  if (ids.size === 0) return [];
  return (
    db.prepare('SELECT seq FROM outbox WHERE lower(hex(event_id)) IN (SELECT value FROM json_each(?))').all(JSON.stringify([...ids])) as {
      seq: number;
    }[]
  ).map((r) => r.seq);
}

/**
 * What a daemon that ran on a read-only card holds, into the database once it opens read-write: the
 * rows delivered meanwhile are deleted (by event id), the held fixes inserted after the newest row
 * with their event ids. Returns the counts.
 */
export function storeHeld(db: Database, held: HeldFixes): { deleted: number; inserted: number } {
  const rows = undelivered(held);
  let deleted = 0;
  let inserted = 0;
  // One transaction (insertHeldRows's nests as a savepoint): a power cut leaves both or neither.
  db.transaction(() => {
    if (held.delivered.size > 0)
      deleted = db
        .prepare('DELETE FROM outbox WHERE lower(hex(event_id)) IN (SELECT value FROM json_each(?))')
        .run(JSON.stringify([...held.delivered])).changes;
    if (rows.length > 0) inserted = insertHeldRows(db, rows);
    writeHeldState(db, held);
  })();
  return { deleted, inserted };
}

/** Held rows keep their event ids; their seqs follow the stored rows (record order is kept). */
export function insertHeldRows(db: Database, rows: readonly OutboxRow[]): number {
  const max = (db.prepare('SELECT max(seq) AS m FROM outbox').get() as { m: number | null }).m ?? 0;
  const insert = db.prepare(
    `INSERT INTO outbox (${ROW_COLUMNS}) VALUES (@seq, @event_id, @fix_time, @lat_e7, @lon_e7, @alt_cm, @speed_cms, @track_cdeg, @hdop_c, @sats, @flags)`,
  );
  let n = 0;
  db.transaction(() => {
    for (const r of rows) n += insert.run({ ...r, seq: max + 1 + n }).changes;
  })();
  return n;
}
