import type { Logger } from '../log.js';
import type { Clock } from '../system/clock.js';
import { statfsFree, type Ballast } from './ballast.js';

/**
 * Whether the data directory's file system is full, as the database found out (SQLITE_FULL or
 * ENOSPC from any writer), and when it has room again (statfs). Entering releases the ballast at
 * once, from whichever writer met the full disk first (outbox commit, token lock, token pair), so
 * that the others can still write the little they must. Leaving writes the ballast again.
 *
 * "Room again" is twice the ballast (at least 1 MiB): the ballast is written back first and the
 * database must still have as much left after it, or the next commit would fill the disk again.
 */
export interface FullDiskOptions {
  ballast: Ballast;
  dataDir: string;
  clock: Clock;
  logger: Logger;
  /** Free bytes of the data directory's file system; injected by tests. */
  freeBytes?: (dir: string) => number;
}

export interface FullDiskState {
  active: boolean;
  /** Wall ms when the disk was found full (display only). */
  sinceWallMs?: number;
  /** Times the disk was found full since start. */
  episodes: number;
  ballastPresent: boolean;
}

const MIN_ROOM = 1024 * 1024;

export class FullDisk {
  readonly #options: FullDiskOptions;
  #active = false;
  #sinceWallMs: number | undefined;
  #episodes = 0;
  /** Set on entering: the outbox caps the file and checkpoints on its next commit (outside any transaction). */
  #needsCap = false;

  constructor(options: FullDiskOptions) {
    this.#options = options;
  }

  /** Writes the ballast when the disk has room for it. */
  start(): void {
    this.#options.ballast.ensure();
  }

  get active(): boolean {
    return this.#active;
  }

  /** A writer met SQLITE_FULL/ENOSPC. Synchronous and idempotent: safe inside a failing transaction. */
  enter(error?: { code?: string; message?: string }): void {
    if (this.#active) return;
    this.#active = true;
    this.#needsCap = true;
    this.#episodes++;
    this.#sinceWallMs = this.#options.clock.wallMs();
    this.#options.logger.error(
      { err: error ? { code: error.code, message: error.message } : undefined, dataDir: this.#options.dataDir },
      'disk full: releasing the ballast; delivery goes on and frees room, new fixes wait in memory until there is room',
    );
    this.#options.ballast.release();
  }

  /** True once after enter(): the caller caps the database file now. */
  takeCap(): boolean {
    const cap = this.#needsCap;
    this.#needsCap = false;
    return cap;
  }

  /** While active: whether statfs shows room again; then writes the ballast back and leaves. */
  checkRoom(): boolean {
    if (!this.#active) return false;
    let free: number;
    try {
      free = (this.#options.freeBytes ?? statfsFree)(this.#options.dataDir);
    } catch {
      return false;
    }
    if (free < Math.max(MIN_ROOM, 2 * this.#options.ballast.bytes)) return false;
    this.#active = false;
    this.#needsCap = false;
    this.#sinceWallMs = undefined;
    this.#options.ballast.ensure();
    this.#options.logger.info({ freeBytes: free }, 'disk has room again: the database grows again and the ballast is back');
    return true;
  }

  state(): FullDiskState {
    return {
      active: this.#active,
      ...(this.#sinceWallMs !== undefined ? { sinceWallMs: this.#sinceWallMs } : {}),
      episodes: this.#episodes,
      ballastPresent: this.#options.ballast.present,
    };
  }
}
