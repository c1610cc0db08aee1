import { AgentError, errorFields } from '../errors.js';
import type { Logger } from '../log.js';
import { ensureDataDir } from './data-dir.js';
import { nearestReadOnly } from './data-dir-fault.js';

/**
 * A daemon started on a read-only card asks every intervalMs whether the data
 * directory's file system takes writes again (access(2) says EROFS until it is remounted
 * read-write, for root too). When it does, the data directory is created if need be and its
 * instance lock taken (daemon-locks.ts takeDataDirLock); then onWritable reopens the database
 * read-write and stores what is held. A lock another daemon took is logged once and asked again.
 */
export interface WritableWatchOptions {
  dataDir: string;
  intervalMs: number;
  logger: Logger;
  /** The data directory's lock (daemon-locks.ts): false while still read-only, throws when another daemon holds it. */
  locks?: { takeDataDirLock(): boolean } | undefined;
  onWritable: () => void;
}

export class WritableWatch {
  readonly #options: WritableWatchOptions;
  #timer: NodeJS.Timeout | undefined;
  #lastRefusal: string | undefined;

  constructor(options: WritableWatchOptions) {
    this.#options = options;
  }

  start(): void {
    this.#timer = setInterval(() => this.check(), this.#options.intervalMs);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** One look; true when onWritable was called. */
  check(): boolean {
    if (!this.#timer || nearestReadOnly(this.#options.dataDir) !== undefined) return false;
    try {
      ensureDataDir(this.#options.dataDir);
      if (this.#options.locks && !this.#options.locks.takeDataDirLock()) return false;
    } catch (e) {
      const code = e instanceof AgentError ? e.code : 'UNKNOWN';
      if (code !== this.#lastRefusal)
        this.#options.logger.error(
          { err: errorFields(e) },
          'the data directory is writable again but cannot be taken: staying on what is held in memory, asking again',
        );
      this.#lastRefusal = code;
      return false;
    }
    this.stop();
    this.#options.logger.info(
      { dataDir: this.#options.dataDir },
      'the data directory is writable again: reopening the database read-write',
    );
    this.#options.onWritable();
    return true;
  }
}
