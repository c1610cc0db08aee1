import type { Statement } from 'better-sqlite3';
import { fromRow, type OutboxRow } from './row.js';
import type { QueueEntry } from '../../upload/upload-queue.js';

/** Rows read at a time while looking for the oldest pending fix past the delivered ones. */
const OLDEST_SCAN_PAGE = 512;

/** `SELECT … FROM outbox WHERE seq > ? ORDER BY seq LIMIT ?` */
export type RowsAfter = Statement<[number, number], OutboxRow>;

/**
 * Up to `limit` committed fixes with seq > afterSeq, oldest first, passing over those `gone` says
 * are delivered or dead-lettered in memory but not yet deleted (the backlog lane's page).
 */
export function committedAfter(after: RowsAfter, afterSeq: number, limit: number, gone: (seq: number) => boolean): QueueEntry[] {
  const out: QueueEntry[] = [];
  let cursor = afterSeq;
  while (out.length < limit) {
    const rows = after.all(cursor, limit);
    for (const r of rows) if (!gone(r.seq)) out.push(fromRow(r));
    if (rows.length < limit) break;
    cursor = rows[rows.length - 1]!.seq;
  }
  return out;
}

/** The fix time of the oldest committed row `gone` does not pass over; undefined when there is none. */
export function oldestCommittedTime(after: RowsAfter, gone: (seq: number) => boolean): number | undefined {
  // Requeued dead letters take seqs below the others (dead-letters.ts): start below any.
  let cursor = Number.MIN_SAFE_INTEGER;
  for (;;) {
    const rows = after.all(cursor, OLDEST_SCAN_PAGE);
    for (const r of rows) if (!gone(r.seq)) return r.fix_time;
    if (rows.length < OLDEST_SCAN_PAGE) return undefined;
    cursor = rows[rows.length - 1]!.seq;
  }
}
