import type { Database } from 'better-sqlite3';
import { parseUuid } from '../event-id.js';
import { fromRow, ROW_COLUMNS, toRow, type OutboxRow } from './row.js';
import type { QueueEntry } from '../../upload/upload-queue.js';

/**
 * The dead letters seen from outside the daemon: `telematics-agent outbox requeue-dead-letters`
 * and `outbox export` (src/cli/outbox.ts). Both work on the database file directly, whether the
 * daemon runs or not: WAL lets them read beside it, and a write waits for the daemon's commit
 * (busy timeout) rather than failing.
 *
 * Requeued fixes keep their original event id (the platform de-duplicates by it, so nothing is
 * sent twice under another id) and take seqs below every row in the outbox: the running daemon
 * numbers its new fixes upwards from its highest seq, so the two can never collide, and the
 * daemon notices the other connection's commit (PRAGMA data_version, committer.ts) and sends them.
 */

export interface RequeueResult {
  requeued: number;
  /** Dead letters whose stored fix could not be read back (left in place, with the reason). */
  unreadable: { seq: number; reason: string }[];
}

interface DeadRow {
  seq: number;
  event_id: string;
  fix_time: number;
  fix_json: string;
  status: number | null;
  error: string;
  failed_at: number;
}

/** Moves every readable dead letter back into the outbox, in one transaction. */
export function requeueDeadLetters(db: Database): RequeueResult {
  const unreadable: RequeueResult['unreadable'] = [];
  let requeued = 0;
  // IMMEDIATE: take the write lock before reading min(seq), so the daemon cannot commit in between.
  db.transaction(() => {
    const dead = db
      .prepare('SELECT seq, event_id, fix_time, fix_json, status, error, failed_at FROM dead_letter ORDER BY fix_time, seq')
      .all() as DeadRow[];
    if (dead.length === 0) return;
    const min = (db.prepare('SELECT min(seq) AS m FROM outbox').get() as { m: number | null }).m;
    let seq = Math.min(min ?? 1, 1) - dead.length;
    const insert = db.prepare(
      `INSERT INTO outbox (${ROW_COLUMNS}) VALUES (@seq, @event_id, @fix_time, @lat_e7, @lon_e7, @alt_cm, @speed_cms, @track_cdeg, @hdop_c, @sats, @flags)`,
    );
    const del = db.prepare('DELETE FROM dead_letter WHERE seq = ?');
    for (const d of dead) {
      const row = rowOf(d, seq);
      if (typeof row === 'string') {
        unreadable.push({ seq: d.seq, reason: row });
        continue;
      }
      insert.run(row);
      del.run(d.seq);
      seq++;
      requeued++;
    }
  }).immediate();
  return { requeued, unreadable };
}

function rowOf(d: DeadRow, seq: number): OutboxRow | string {
  let fix: QueueEntry;
  try {
    fix = JSON.parse(d.fix_json) as QueueEntry;
  } catch (e) {
    return `stored fix is not JSON (${(e as Error).message})`;
  }
  let id: Buffer;
  try {
    id = parseUuid(d.event_id);
  } catch {
    return `event id ${d.event_id} is not a UUID`;
  }
  // toRow reads only the position fields and the transition flag, which the stored entry carries.
  const row = toRow(seq, id, { ...fix, time: d.fix_time } as unknown as Parameters<typeof toRow>[2]);
  return row ?? 'stored fix has no position';
}

/** One line of `outbox export`. */
export type ExportLine =
  | ({ kind: 'pending'; seq: number; fixTime: string } & Omit<QueueEntry, 'seq'>)
  | { kind: 'dead-letter'; eventId: string; fixTime: string; status: number | null; reason: string; failedAt: string; fix: unknown };

/** Pending fixes as committed, oldest first (the daemon's last second may still be in its memory). */
export function* pendingLines(db: Database): Generator<ExportLine> {
  const rows = db.prepare(`SELECT ${ROW_COLUMNS} FROM outbox ORDER BY seq`).iterate() as IterableIterator<OutboxRow>;
  for (const r of rows) {
    const { seq, ...fix } = fromRow(r);
    yield { kind: 'pending', seq, fixTime: new Date(fix.time).toISOString(), ...fix };
  }
}

export function* deadLetterLines(db: Database): Generator<ExportLine> {
  const rows = db
    .prepare('SELECT seq, event_id, fix_time, fix_json, status, error, failed_at FROM dead_letter ORDER BY seq')
    .iterate() as IterableIterator<DeadRow>;
  for (const d of rows) {
    let fix: unknown;
    try {
      fix = JSON.parse(d.fix_json);
    } catch {
      fix = d.fix_json;
    }
    yield {
      kind: 'dead-letter',
      eventId: d.event_id,
      fixTime: new Date(d.fix_time).toISOString(),
      status: d.status,
      reason: d.error,
      failedAt: new Date(d.failed_at).toISOString(),
      fix,
    };
  }
}
