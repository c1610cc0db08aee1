import type { Database } from 'better-sqlite3';
import type { Logger } from '../../log.js';
import type { OutboxRow } from './row.js';
import { DEFAULT_BYTES_PER_ROW, type FileRoom } from './bound.js';
import { thinRows } from './thinning.js';
import { HELD_ROW_HEAP_BYTES, MAX_HELD_HEAP_BYTES } from '../../fix/held-memory.js';

/**
 * Fixes the outbox holds in memory while they cannot be committed, whatever the reason (a full
 * disk, a read-only card, I/O errors): as many as the held-memory budget's bytes take (32,768, 55
 * minutes at 10 Hz, 12 MiB of heap). Past it what is held is thinned like the backlog on disk,
 * evenly (thinning.ts thinRows), down to 90 % of the bound, and counted in `thinned`: memory is not
 * a place to keep a day of fixes, and a crash loses what is only there.
 */
export const MAX_BUFFER_WHILE_FULL = Math.floor(MAX_HELD_HEAP_BYTES / HELD_ROW_HEAP_BYTES);
/** Rows per transaction while the disk is full: what fits goes in, the rest waits. */
export const FULL_DISK_CHUNK = 64;

/**
 * Caps the file at its size (max_page_count), so that what the ballast freed goes to the WAL, not
 * to more fixes; a checkpoint moves the WAL into the file.
 */
export function capAtSize(db: Database): void {
  try {
    db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
    db.pragma('wal_checkpoint(RESTART)');
  } catch {
    // a checkpoint that cannot run now runs with a later commit
  }
}

/** Lifts the cap: max_page_count back to what it was at start. */
export function lift(db: Database, pageLimit: number | undefined): void {
  try {
    if (pageLimit !== undefined) db.pragma(`max_page_count = ${pageLimit}`);
  } catch {
    // the next full-disk episode caps again from whatever it is
  }
}

/** Rows below which bytes per row is not measured (the schema's own pages would dominate). */
const MEASURE_FROM_ROWS = 500;

/**
 * Fixes the file holds without growing (its rows, plus as many again per page as its free pages
 * take) and the bytes a row takes in it: pages in use / rows (the other tables are a few pages),
 * never taken below DEFAULT_BYTES_PER_ROW. Packed rows take ~64 B at 1 KiB pages with the event-id
 * index, but below the floor the backlog is thinned commit after commit and its pages run about
 * half full (~116 B per kept row measured on a 20,000-fix run): sized from the packed figure the
 * file would outgrow its share by half.
 */
export function fileRoom(db: Database, rows: number): FileRoom {
  try {
    const pages = db.pragma('page_count', { simple: true }) as number;
    const free = db.pragma('freelist_count', { simple: true }) as number;
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    const used = Math.max(1, pages - free);
    return {
      fits: rows + Math.floor((free * rows) / used),
      bytesPerRow: rows >= MEASURE_FROM_ROWS ? Math.max(DEFAULT_BYTES_PER_ROW, (used * pageSize) / rows) : DEFAULT_BYTES_PER_ROW,
    };
  } catch {
    return { fits: rows, bytesPerRow: DEFAULT_BYTES_PER_ROW };
  }
}

/** Past MAX_BUFFER_WHILE_FULL, thins what is held in memory; returns what is kept and how many went. */
export function thinHeld(held: OutboxRow[], logger: Logger, why: string): { held: OutboxRow[]; thinned: number } {
  if (held.length <= MAX_BUFFER_WHILE_FULL) return { held, thinned: 0 };
  const kept = thinRows(held, Math.floor(MAX_BUFFER_WHILE_FULL * 0.9));
  const thinned = held.length - kept.length;
  logger.warn(
    { thinned, held: kept.length, limit: MAX_BUFFER_WHILE_FULL, why },
    'commits failing for too long: thinned the fixes held in memory evenly (every 3rd kept per pass, transitions and the newest kept)',
  );
  return { held: kept, thinned };
}
