import { randomFillSync } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, openSync, statSync, statfsSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from '../log.js';
import { errorFields } from '../errors.js';

/**
 * A file of reserved space in dataDir (`ballast`), written while the disk has room and deleted
 * the moment the database meets a full disk (SQLITE_FULL/ENOSPC). What it frees is what SQLite
 * needs to stay writable on a full disk: WAL frames for the transactions that delete delivered
 * rows (which is how a full disk gets room again while the platform is reachable), a WAL
 * checkpoint, and the token pair and lock. Without it, even a DELETE fails with SQLITE_FULL,
 * because it must write its pages to the WAL first.
 *
 * The size is storage.ballastBytes (default 4 MiB): at 1 KiB pages that is 4,096 WAL frames,
 * enough for a checkpoint of SQLite's default 1,000-page WAL plus the delete of a full delivered
 * batch (2,000 rows, about 150 pages) many times over, and too small to matter on any SD card.
 * It is written with random bytes so that a compressing or de-duplicating file system really
 * reserves it.
 */
export const BALLAST_FILE = 'ballast';

export interface BallastOptions {
  dataDir: string;
  /** 0 disables the ballast. */
  bytes: number;
  logger: Logger;
  /** Free bytes of the data directory's file system; injected by tests. */
  freeBytes?: (dir: string) => number;
}

const CHUNK = 64 * 1024;

export class Ballast {
  readonly #options: BallastOptions;
  readonly #file: string;
  #released = 0;

  constructor(options: BallastOptions) {
    this.#options = options;
    this.#file = path.join(options.dataDir, BALLAST_FILE);
  }

  get bytes(): number {
    return this.#options.bytes;
  }

  /** Whether the ballast file is there at its full size. */
  get present(): boolean {
    try {
      return statSync(this.#file).size >= this.#options.bytes && this.#options.bytes > 0;
    } catch {
      return false;
    }
  }

  /** How often it was released since start. */
  get releases(): number {
    return this.#released;
  }

  /**
   * Writes the ballast when it is missing and the disk keeps at least as much again free after
   * it (so that creating it never makes a full disk of a nearly full one). Returns whether it is
   * in place afterwards.
   */
  ensure(): boolean {
    if (this.#options.bytes <= 0) return false;
    if (this.present) return true;
    let free: number;
    try {
      free = (this.#options.freeBytes ?? statfsFree)(this.#options.dataDir);
    } catch {
      return false;
    }
    const have = existsSync(this.#file) ? safeSize(this.#file) : 0;
    if (free + have < 2 * this.#options.bytes) return false;
    let fd: number | undefined;
    try {
      fd = openSync(this.#file, 'w', 0o600);
      const chunk = Buffer.alloc(CHUNK);
      for (let written = 0; written < this.#options.bytes; ) {
        const n = Math.min(CHUNK, this.#options.bytes - written);
        randomFillSync(chunk, 0, n);
        written += writeSync(fd, chunk, 0, n);
      }
      fsyncSync(fd);
      closeSync(fd);
      fd = undefined;
      this.#options.logger.info({ bytes: this.#options.bytes, file: this.#file }, 'disk ballast in place (released on a full disk)');
      return true;
    } catch (e) {
      if (fd !== undefined) closeSync(fd);
      // A half-written ballast would take space and give none back: remove it.
      this.#unlink();
      this.#options.logger.warn({ err: errorFields(e) }, 'disk ballast not written');
      return false;
    }
  }

  /** Deletes the ballast; returns the bytes freed (0 when there was none). */
  release(): number {
    if (!existsSync(this.#file)) return 0;
    const size = safeSize(this.#file);
    if (!this.#unlink()) return 0;
    this.#released++;
    this.#options.logger.warn({ bytes: size, file: this.#file }, 'disk full: released the disk ballast to keep the database writable');
    return size;
  }

  #unlink(): boolean {
    try {
      unlinkSync(this.#file);
      return true;
    } catch {
      return false;
    }
  }
}

function safeSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

export function statfsFree(dir: string): number {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
}
