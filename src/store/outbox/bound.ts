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

/** Below the disk floor the outbox may still hold this many (~100 KB): the live lane needs a queue. */
const MIN_LOW_DISK_BOUND = 1000;

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
   * The free-disk floor, at most every checkIntervalMs unless `force`. `fits` estimates how many
   * fixes the file holds as it is (its rows plus what its free pages take): below the floor that is
   * the bound, so the file stops growing but no fix goes that its free pages could keep.
   */
  check(fits: () => number, force = false): void {
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
          'free disk below storage.minFreeBytes: the outbox stops growing and thins its oldest backlog',
        );
      this.#lowDisk = Math.min(this.#lowDisk ?? Infinity, Math.max(MIN_LOW_DISK_BOUND, fits()));
    } else if (this.#lowDisk !== undefined && free > this.#o.minFreeBytes * 1.1) {
      this.#lowDisk = undefined;
    }
  }
}

function statfsFree(dir: string): number {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
}
