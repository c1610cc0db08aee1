import { statfsSync } from 'node:fs';
import type { Logger } from '../../log.js';
import type { Clock } from '../../system/clock.js';

/**
 * How many fixes the outbox may hold: storage.maxFixes, lowered while the disk is short, either
 * below the storage.minFreeBytes floor (checked now and then: statfs is cheap, but not per commit, except while the disk is full).
 * Thinning frees pages inside the file, not on the disk, so a short disk stops the file growing at
 * its size rather than shrinking the bound to nothing; with room again the bound is the configured one.
 * SQLITE_FULL does not lower it (full-disk.ts caps the file instead): a bound lowered by a full disk
 * went on thinning a fifth of the backlog after the disk had room again.
 *
 * Below the floor the bound is sized from the space there is (issue 22.4). The floor is the
 * system's reserve (journald, package updates, the ballast's refill): the agent must not be what
 * walks the card down to nothing. But a fixed cap of 1,000 rows (~120 KB) below a 200 MiB floor
 * threw away 83 % of a 10-minute 10 Hz drive that would have cost 0.7 MB of a card with 150 MiB
 * free, while a truly full disk in the same 10 minutes lost nothing. So below the floor the file
 * may still grow by LOW_DISK_SHARE of what is free when the floor is crossed, at the bytes a row
 * takes in this file (while-full.ts fileRoom: measured, at least 128 B), on top of what its own
 * free pages hold. The bound is frozen there while the disk stays
 * short (it only falls, if something else eats the space), so the agent takes at most a quarter of
 * the space that was left, however long the outage: three quarters of it stay the system's. At
 * 150 MiB free that is ~37 MiB, ~300,000 fixes (8 h at 10 Hz); at 1 MiB free ~2,000. Never below
 * MIN_LOW_DISK_BOUND: the live lane needs a queue, and a disk with less than that left meets
 * SQLITE_FULL, which full-disk.ts handles (ballast, capped file, fixes held in memory).
 */
export interface OutboxBoundOptions {
  maxFixes: number;
  minFreeBytes: number;
  dataDir: string;
  clock: Clock;
  logger: Logger;
  /** Free bytes of the data directory's file system; injected by tests. */
  freeBytes?: (dir: string) => number;
  /** How often the free-disk floor is checked. */
  checkIntervalMs?: number;
}

/** Below the disk floor the outbox may always hold this many (~120 KB): the live lane needs a queue. */
export const MIN_LOW_DISK_BOUND = 1000;
/** The share of the free space below the floor the outbox may still grow into (see above). */
export const LOW_DISK_SHARE = 0.25;
/** Bytes per row assumed until the file holds enough rows to measure it, and the least ever assumed (while-full.ts fileRoom). */
export const DEFAULT_BYTES_PER_ROW = 128;

/** What the database file holds as it is: rows it takes without growing, and the bytes one row takes in it. */
export interface FileRoom {
  fits: number;
  bytesPerRow: number;
}

export class OutboxBound {
  readonly #o: OutboxBoundOptions;
  #lowDisk: number | undefined;
  #lastCheck = -Infinity;

  constructor(options: OutboxBoundOptions) {
    this.#o = options;
  }

  /** The bound in force. */
  get value(): number {
    return Math.min(this.#o.maxFixes, this.#lowDisk ?? Infinity);
  }

  get lowDisk(): boolean {
    return this.#lowDisk !== undefined;
  }

  /**
   * The free-disk floor, at most every checkIntervalMs unless `force`. `room` says how many fixes
   * the file holds as it is (its rows plus what its free pages take) and what a row costs: below the
   * floor the bound is that plus LOW_DISK_SHARE of the free space in rows.
   */
  check(room: () => FileRoom, force = false): void {
    const now = this.#o.clock.monotonicMs();
    if (!force && now - this.#lastCheck < (this.#o.checkIntervalMs ?? 30_000)) return;
    this.#lastCheck = now;
    let free: number;
    try {
      free = (this.#o.freeBytes ?? statfsFree)(this.#o.dataDir);
    } catch {
      return;
    }
    if (free < this.#o.minFreeBytes) {
      if (this.#lowDisk === undefined)
        this.#o.logger.warn(
          { freeBytes: free, floor: this.#o.minFreeBytes },
          'free disk below storage.minFreeBytes: the outbox grows by at most a quarter of what is free, then thins its oldest backlog',
        );
      const { fits, bytesPerRow } = room();
      const allowance = Math.floor((Math.max(0, free) * LOW_DISK_SHARE) / Math.max(1, bytesPerRow));
      this.#lowDisk = Math.min(this.#lowDisk ?? Infinity, Math.max(MIN_LOW_DISK_BOUND, fits + allowance));
    } else if (this.#lowDisk !== undefined && free > this.#o.minFreeBytes * 1.1) {
      this.#lowDisk = undefined;
    }
  }
}

function statfsFree(dir: string): number {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
}
