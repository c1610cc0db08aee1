import { describeError, errorFields, isCorrupt, type StoreError } from '../errors.js';
import type { Logger } from '../log.js';
import { WritableWatch } from '../system/writable-watch.js';
import { StoreSwap, type StoreSwapOptions } from './store-swap.js';

/**
 * The components over the store handle (platform, uploader, receiver, status): built once by
 * start() and never restarted for the store, except when a first start failed half-way.
 */
export interface SupervisedComponents {
  /** Builds and starts every component, the store's first open included (agent.ts #start). */
  start(): Promise<void>;
  /** start() finished: the components exist and only the store is swapped. */
  started(): boolean;
  /** Stops what a start() that failed half-way built, the receiver excepted. */
  stop(): Promise<void>;
  /** The daemon is stopping: no swap. */
  stopping(): boolean;
}

export interface StoreSupervisorOptions {
  dataDir: string;
  logger: Logger;
  /** The data directory's lock, taken when a read-only card takes writes again (daemon-locks.ts). */
  locks?: { takeDataDirLock(): boolean } | undefined;
  /** How often a read-only data directory is checked for writes again (default 2 s). */
  readOnlyCheckMs?: number | undefined;
  components: SupervisedComponents;
  /** The swap this supervisor drives (store-swap.ts); its damage and open reports come here. */
  store: Omit<StoreSwapOptions, 'onDamage' | 'onOpen'>;
}

/**
 * When the store is swapped, and to which database: a damaged page at run time (a salvage), a
 * read-only card that takes writes again (the file), a failed recovery (the read-only copy again,
 * the writable watch asking later). How is the swap's (store-swap.ts), step by step. While it
 * swaps, `restarting` says why (the watchdog is fed with it).
 */
export class StoreSupervisor {
  readonly #options: StoreSupervisorOptions;
  /** The one owner of the swap's steps; the agent takes its first open and final stop from here. */
  readonly swap: StoreSwap;
  #repairing: Promise<void> | undefined;
  #restarting: string | undefined;
  /** The watch for a read-only card that takes writes again, while on the copy. */
  #watch: WritableWatch | undefined;
  /** Failed recoveries in a row: the writable watch asks again after a longer wait each time. */
  #failedRecoveries = 0;
  #readOnly = false;
  starting: Promise<void> | undefined;

  constructor(options: StoreSupervisorOptions) {
    this.#options = options;
    this.swap = new StoreSwap({ ...options.store, onDamage: (e) => this.onDamage(e), onOpen: (readOnly) => this.#opened(readOnly) });
  }

  /** The run is on a read-only card's copy in memory. */
  get readOnly(): boolean {
    return this.#readOnly;
  }

  /** Why the store is restarting, while it does. */
  get restarting(): string | undefined {
    return this.#restarting;
  }

  /** The restart under way, if any. */
  get repairing(): Promise<void> | undefined {
    return this.#repairing;
  }

  /** A database was opened (store-swap.ts open): on a read-only copy, watch the card for writes. */
  #opened(readOnly: boolean): void {
    this.#readOnly = readOnly;
    this.stopWatch();
    if (readOnly) this.#watchWritable();
  }

  /** Stops the watch for a card that takes writes again (the daemon stops, or the file is open). */
  stopWatch(): void {
    this.#watch?.stop();
    this.#watch = undefined;
  }

  /** The first start of the daemon; agent.db taken by a directory runs on the copy instead of failing. */
  async startFirst(): Promise<void> {
    try {
      await this.#options.components.start();
    } catch (e) {
      // No restart cures it: the daemon stays up on the copy in memory (serving status, recording)
      // and the writable watch tries the file again later.
      if ((e as { code?: unknown }).code !== 'DATABASE_NOT_A_FILE' || this.#options.components.stopping()) throw e;
      this.#options.logger.error({ err: errorFields(e) }, 'the database cannot be used: recording into memory until it can');
      this.#failedRecoveries++;
      this.swap.next = { readOnlyAgain: true };
      await this.#options.components.start();
    }
  }

  /**
   * A statement met a damaged page at run time. The file must not be used any more: the store is
   * swapped onto a salvage of it (the file moved aside, what is readable and what the outbox held
   * in a fresh one).
   */
  onDamage(e: StoreError): void {
    if (this.#repairing || this.#options.components.stopping()) return;
    // A copy in memory of a read-only card is not the file: nothing to salvage.
    if (this.#readOnly) return;
    const reason = `${e.sqliteCode}: ${(e.cause as Error | undefined)?.message ?? e.message}`;
    this.#options.logger.error({ reason }, 'database damaged at run time: stopping, salvaging what is readable, starting again');
    this.#restart(reason, { salvage: reason });
  }

  /** On a read-only card: once it takes writes, take its lock and start the store again on it. */
  #watchWritable(): void {
    const base = this.#options.readOnlyCheckMs ?? 2000;
    const watch = new WritableWatch({
      dataDir: this.#options.dataDir,
      // After a failed recovery on a writable card, ask again after 2x, 4x, ... up to a minute.
      intervalMs: Math.min(Math.max(base, 60_000), base * 2 ** this.#failedRecoveries),
      logger: this.#options.logger.child({ component: 'store' }),
      locks: this.#options.locks,
      onWritable: () => this.#restart('the data directory is writable again', {}),
    });
    watch.start();
    this.#watch = watch;
  }

  /**
   * The swap (store-swap.ts): steps 1 to 3 here, `next` chosen, steps 4 to 6 in #openAgain. The
   * components over the handle go on (a start that failed half-way is started again).
   */
  #restart(why: string, next: StoreSwap['next']): void {
    if (this.#repairing || this.#options.components.stopping()) return;
    this.#restarting = `restarting the store: ${why}`.slice(0, 200);
    this.#repairing = (async () => {
      // Off the failing statement's stack before anything closes its database, and never while
      // start() is still building components on it.
      await new Promise((resolve) => setImmediate(resolve));
      await this.starting?.catch(() => undefined);
      // From here fixes and events wait in the handle's queue; answers to uploads in flight are
      // kept there by event id.
      this.swap.pause();
      this.swap.takeHeld();
      this.swap.close();
      this.swap.next = next;
      if (!this.#options.components.started()) await this.#options.components.stop();
      this.#options.logger.info({ why }, 'opening the store again; the receiver, the platform and the uploader go on');
      await this.#openAgain();
    })().finally(() => {
      this.#repairing = undefined;
      this.#restarting = undefined;
    });
  }

  /**
   * Steps 4 to 6 of the swap. A failed attempt loses nothing: steps 1 to 3 take what its outbox
   * held along with what was held before. A damaged file is salvaged with it; any other failure
   * (the card read-only again, SQLITE_FULL or IOERR while storing what was held) goes back to the
   * read-only copy in memory with the fixes held there, and the writable watch asks again later.
   * Only when even that fails does the error reach the caller.
   */
  async #openAgain(): Promise<void> {
    const { components } = this.#options;
    const swap = this.swap;
    for (let attempt = 1; ; attempt++) {
      const fallback = swap.next.readOnlyAgain === true;
      try {
        if (components.started()) {
          swap.open();
          swap.attach();
          await swap.resume();
        } else await components.start();
        if (!this.#readOnly) this.#failedRecoveries = 0;
        return;
      } catch (e) {
        if (components.stopping() || attempt >= 4) throw e;
        swap.pause();
        swap.takeHeld();
        swap.close();
        swap.next = {};
        if (!components.started()) await components.stop();
        const held = swap.heldCount;
        if (isCorrupt(e) && !fallback) {
          const reason = describeError(e);
          this.#options.logger.error({ reason, held }, 'database damaged while starting again: salvaging what is readable, starting again');
          swap.next = { salvage: reason };
        } else {
          this.#failedRecoveries++;
          this.#options.logger.error(
            { err: errorFields(e), held, failedRecoveries: this.#failedRecoveries },
            'starting the store again failed: back to the read-only copy in memory with what is held; the data directory is tried again later',
          );
          if (fallback) throw e;
          swap.next = { readOnlyAgain: true };
        }
      }
    }
  }
}
