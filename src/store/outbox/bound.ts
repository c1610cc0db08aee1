import { statfsSync } from 'node:fs';
import type { Logger } from '../../log.js';
import type { Clock } from '../../system/clock.js';
import type { MetaStore } from '../meta.js';

/**
 * How many fixes the outbox may hold: storage.maxFixes, lowered while the disk is short, either
 * below the storage.minFreeBytes floor (checked now and then: statfs is cheap, but not per commit, except while the disk is full).
 * Thinning frees pages inside the file, not on the disk, so a short disk stops the file growing at
 * its size rather than shrinking the bound to nothing; with room again the bound is the configured one.
 * SQLITE_FULL does not lower it (full-disk.ts caps the file instead): a bound lowered by a full disk
 * went on thinning a fifth of the backlog after the disk had room again.
 *
 * Below the floor the bound is sized from the space there is. The floor is the
 * system's reserve (journald, package updates, the ballast's refill): the agent must not be what
 * walks the card down to nothing. But a fixed cap of 1,000 rows (~120 KB) below a 200 MiB floor
 * threw away 83 % of a 10-minute 10 Hz drive that would have cost 0.7 MB of a card with 150 MiB
 * free, while a truly full disk in the same 10 minutes lost nothing. So below the floor the file
 * may still grow by LOW_DISK_SHARE of what is free when the floor is crossed, at the bytes a row
 * takes in this file (while-full.ts fileRoom: measured, at least 128 B), on top of what its own
 * free pages hold. The bound is frozen there while the disk stays
 * short (it only falls, if something else eats the space), so the agent takes at most a quarter of
 * the space that was left, however long the outage: three quarters of it stay the system's. The
 * frozen bound is kept in the meta table (LOW_DISK_META_KEY) until the disk is back above 1.1 x the
 * floor: an ignition cycle, a salvage or a read-only recovery reopens the outbox with the bound set
 * when the floor was crossed, not with a quarter of what is free now (ten daily restarts sized
 * afresh would take 1 - 0.75^10 = 94 % of the space). At
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
  /** Where the bound set below the floor outlives the process (LOW_DISK_META_KEY). */
  meta?: Pick<MetaStore, 'getJson' | 'setJson' | 'delete'>;
}

/** Meta key of the bound set when the free-disk floor was crossed (LowDiskFacts). */
export const LOW_DISK_META_KEY = 'outbox.lowDiskBound';
/** Free space back above this many times the floor lifts the lowered bound (and forgets it). */
export const LOW_DISK_CLEAR_FACTOR = 1.1;

/** What the meta table keeps of a bound lowered below the floor. */
export interface LowDiskFacts {
  /** The bound in rows. */
  bound: number;
  /** Free bytes when the floor was crossed (for a person reading the table). */
  freeBytes: number;
  floor: number;
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
  readonly #options: OutboxBoundOptions;
  #lowDisk: number | undefined;
  #lastCheck = -Infinity;
  /** The bound kept from an earlier run, read at the first check (undefined once read). */
  #kept: LowDiskFacts | undefined | null = null;
  /** Free bytes when the floor was crossed, kept with the bound. */
  #freeWhenCrossed: number | undefined;

  constructor(options: OutboxBoundOptions) {
    this.#options = options;
  }

  /** The bound in force. */
  get value(): number {
    return Math.min(this.#options.maxFixes, this.#lowDisk ?? Infinity);
  }

  get lowDisk(): boolean {
    return this.#lowDisk !== undefined;
  }

  /**
   * The free-disk floor, at most every checkIntervalMs unless `force`. `room` says how many fixes
   * the file holds as it is (its rows plus what its free pages take) and what a row costs: below the
   * floor the bound is that plus LOW_DISK_SHARE of the free space in rows, or the bound an earlier
   * run set below the floor if that is lower.
   */
  check(room: () => FileRoom, force = false): void {
    const now = this.#options.clock.monotonicMs();
    if (!force && now - this.#lastCheck < (this.#options.checkIntervalMs ?? 30_000)) return;
    this.#lastCheck = now;
    if (this.#kept === null) this.#kept = this.#readKept();
    let free: number;
    try {
      free = (this.#options.freeBytes ?? statfsFree)(this.#options.dataDir);
    } catch {
      return;
    }
    const floor = this.#options.minFreeBytes;
    if (free < floor) {
      const kept = this.#kept;
      this.#kept = undefined;
      if (this.#lowDisk === undefined && kept)
        this.#options.logger.warn(
          { freeBytes: free, floor, bound: kept.bound, freeWhenCrossed: kept.freeBytes },
          'free disk still below storage.minFreeBytes: the outbox keeps the bound set when the floor was crossed',
        );
      else if (this.#lowDisk === undefined)
        this.#options.logger.warn(
          { freeBytes: free, floor },
          'free disk below storage.minFreeBytes: the outbox grows by at most a quarter of what is free, then thins its oldest backlog',
        );
      const { fits, bytesPerRow } = room();
      const allowance = Math.floor((Math.max(0, free) * LOW_DISK_SHARE) / Math.max(1, bytesPerRow));
      const before = this.#lowDisk ?? kept?.bound;
      const next = Math.min(before ?? Infinity, Math.max(MIN_LOW_DISK_BOUND, fits + allowance));
      if (next !== this.#lowDisk) this.#keep({ bound: next, freeBytes: kept?.freeBytes ?? free, floor });
      this.#lowDisk = next;
    } else if (free > floor * LOW_DISK_CLEAR_FACTOR) {
      if (this.#lowDisk !== undefined || this.#kept) this.#forget();
      this.#lowDisk = undefined;
      this.#kept = undefined;
    } else if (this.#lowDisk === undefined && this.#kept) {
      // Between the floor and the hysteresis: what an earlier run set stays in force.
      this.#lowDisk = this.#kept.bound;
      this.#freeWhenCrossed = this.#kept.freeBytes;
      this.#kept = undefined;
    }
  }

  #readKept(): LowDiskFacts | undefined {
    try {
      const k = this.#options.meta?.getJson<LowDiskFacts>(LOW_DISK_META_KEY);
      return k && Number.isFinite(k.bound) && k.bound >= MIN_LOW_DISK_BOUND ? k : undefined;
    } catch {
      return undefined;
    }
  }

  #keep(facts: LowDiskFacts): void {
    this.#freeWhenCrossed ??= facts.freeBytes;
    try {
      this.#options.meta?.setJson(LOW_DISK_META_KEY, { ...facts, freeBytes: this.#freeWhenCrossed });
    } catch {
      // a full or read-only disk: the bound holds for this run, and the next one sizes it again
    }
  }

  #forget(): void {
    this.#freeWhenCrossed = undefined;
    try {
      this.#options.meta?.delete(LOW_DISK_META_KEY);
    } catch {
      // cleared at the next check with room
    }
  }
}

function statfsFree(dir: string): number {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
}
