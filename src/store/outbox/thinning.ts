import type { Database } from 'better-sqlite3';
import { FLAG_TRANSITION } from './row.js';

/**
 * Thinning the backlog when the outbox reaches its bound (docs/decisions/outbox-and-thinning.md): rather than dropping
 * the newest fixes, a pass takes the oldest half of the least-thinned fixes and keeps every 3rd of
 * them; moving/stopped transitions are always kept. Each row remembers how often its region was
 * thinned (its level, in `flags`), and a pass always works on the lowest level first, so that over a
 * long outage the density stays even along the trip instead of the oldest part decaying to nothing.
 * The newest tenth of the target is never thinned: the recent track stays whole.
 *
 * flags: bit 0 = transition, bits 1..6 = thinning level.
 */

/**
 * Keep every 3rd, not every 2nd: SQLite merges a b-tree leaf with its siblings only once it is less
 * than a third full, so deleting every 2nd row leaves half-full pages and frees none, and appended
 * fixes still need new pages (measured: 2,500 rows, k=2 freed 0 of 153 pages, k=3 freed 58). On a
 * full disk that difference is whether recording can go on at all.
 */
export const THIN_KEEP_EVERY = 3;

const LEVEL_SHIFT = 1;
const LEVEL_MASK = 0x3f;
const LEVEL = `((flags >> ${LEVEL_SHIFT}) & ${LEVEL_MASK})`;
const THINNABLE = `(flags & ${FLAG_TRANSITION}) = 0`;

export interface ThinningOptions {
  /** Thin until at most this many rows remain (or nothing more can go). */
  target: number;
  /** Keep every k-th fix of a thinned region (k >= 2); default 3, see THIN_KEEP_EVERY. */
  keepEvery?: number;
}

/**
 * Runs inside the caller's transaction. Returns how many rows were deleted. Rows are deleted before
 * the survivors' level is raised: on a full disk the deletes make the room the updates need.
 */
export function thinOldest(db: Database, currentCount: number, options: ThinningOptions): number {
  const k = Math.max(2, Math.floor(options.keepEvery ?? THIN_KEEP_EVERY));
  const protect = Math.max(1, Math.floor(options.target / 10));
  const protectedFrom = db
    .prepare<[number], { seq: number }>('SELECT seq FROM outbox ORDER BY seq DESC LIMIT 1 OFFSET ?')
    .get(protect - 1)?.seq;
  if (protectedFrom === undefined) return 0;
  const region = `seq < ${protectedFrom} AND ${THINNABLE}`;
  const minLevel = db.prepare<[], { l: number | null }>(
    `SELECT min(${LEVEL}) AS l FROM outbox WHERE ${region} AND ${LEVEL} < ${LEVEL_MASK}`,
  );
  const countAt = db.prepare<[number], { n: number }>(`SELECT count(*) AS n FROM outbox WHERE ${region} AND ${LEVEL} = ?`);
  const oldestAt = db
    .prepare<[number, number], number>(`SELECT seq FROM outbox WHERE ${region} AND ${LEVEL} = ? ORDER BY seq LIMIT ?`)
    .pluck();
  const del = db.prepare<[number]>('DELETE FROM outbox WHERE seq = ?');
  const raise = db.prepare<[number]>(`UPDATE outbox SET flags = flags + ${1 << LEVEL_SHIFT} WHERE seq = ?`);

  let count = currentCount;
  let deleted = 0;
  while (count > options.target) {
    const level = minLevel.get()?.l;
    if (level === null || level === undefined) break; // only transitions and the protected tail left
    const n = countAt.get(level)!.n;
    // The oldest half of this level; all of it when it is small (a level must not stall the loop).
    const seqs = oldestAt.all(level, n < 4 * k ? n : Math.floor(n / 2)) as number[];
    // Group by group (k fixes, the first kept), and no further than the target asks: a pass over
    // a level would otherwise take a third of it for a bound exceeded by a few fixes.
    let done = 0;
    while (done < seqs.length && count > options.target) {
      for (let i = done + 1; i < Math.min(done + k, seqs.length); i++) {
        const gone = del.run(seqs[i]!).changes;
        count -= gone;
        deleted += gone;
      }
      done += k;
    }
    for (let i = 0; i < Math.min(done, seqs.length); i += k) raise.run(seqs[i]!);
  }
  return deleted;
}

/**
 * The same thinning on rows held in memory (commits failing: a full disk, a read-only card, I/O
 * errors). Same levels, same order as thinOldest: the lowest level first, the oldest half of it,
 * every k-th kept and its level raised, transitions and the newest tenth of the target never. So
 * the delivered track of an outage is evenly spaced whatever its length (one pass over
 * the oldest half each time kept 1 in 27 of the oldest half hour and all of the newest 40 min),
 * and rows committed later carry their level on to the disk. Returns the rows kept, oldest first.
 */
export function thinRows<T extends { flags: number }>(rows: T[], target: number, keepEvery = THIN_KEEP_EVERY): T[] {
  const k = Math.max(2, Math.floor(keepEvery));
  const protect = Math.max(1, Math.floor(target / 10));
  const levelOf = (r: T): number => (r.flags >> LEVEL_SHIFT) & LEVEL_MASK;
  let kept = rows;
  while (kept.length > target) {
    const limit = kept.length - protect;
    let level = Infinity;
    for (let i = 0; i < limit; i++) {
      const r = kept[i]!;
      if ((r.flags & FLAG_TRANSITION) === 0 && levelOf(r) < LEVEL_MASK) level = Math.min(level, levelOf(r));
    }
    if (level === Infinity) break; // only transitions and the protected tail left
    const at: number[] = [];
    for (let i = 0; i < limit; i++) if ((kept[i]!.flags & FLAG_TRANSITION) === 0 && levelOf(kept[i]!) === level) at.push(i);
    // The oldest half of this level; all of it when it is small (a level must not stall the loop).
    const take = at.length < 4 * k ? at.length : Math.floor(at.length / 2);
    const drop = new Set<number>();
    let over = kept.length - target;
    for (let g = 0; g < take && over > 0; g += k) {
      kept[at[g]!]!.flags += 1 << LEVEL_SHIFT;
      for (let i = g + 1; i < Math.min(g + k, take) && over > 0; i++, over--) drop.add(at[i]!);
    }
    if (drop.size === 0) break;
    kept = kept.filter((_, i) => !drop.has(i));
  }
  return kept;
}
