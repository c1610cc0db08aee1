import { describeError, errorFields, isCorrupt, type StoreError } from '../errors.js';
import type { Logger } from '../log.js';
import { WritableWatch } from '../system/writable-watch.js';
import { mergeHeld, type HeldFixes } from './held.js';
import type { Database, OpenDatabaseOptions } from './database.js';
import { openAgentDatabase } from './open-agent-database.js';

/**
 * What the supervisor swaps: the database and the objects bound to it (agent-store.ts, through the
 * store handle). The components over the handle (platform, uploader, receiver, status) are built once by
 * start() and never restart for the store.
 */
export interface SupervisedRun {
  /** Builds and starts every component on the database open() gives (agent.ts #start). */
  start(): Promise<void>;
  /** start() finished: the components exist and only the store is swapped. */
  started(): boolean;
  /** Stops what a start() that failed half-way built, the receiver excepted. */
  stop(): Promise<void>;
  /** Opens the store (open() below) under the components built once and attaches it to the handle (agent-store.ts). */
  openStore(): Promise<void>;
  /** Detaches the store from the handle and closes it; returns what its outbox held only in memory. */
  closeStore(): HeldFixes | undefined;
  /** The daemon is stopping: no restart. */
  stopping(): boolean;
}

export interface StoreSupervisorOptions {
  dataDir: string;
  logger: Logger;
  /** The data directory's lock, taken when a read-only card takes writes again (daemon-locks.ts). */
  locks?: { takeDataDirLock(): boolean } | undefined;
  /** How often a read-only data directory is checked for writes again (default 2 s). */
  readOnlyCheckMs?: number | undefined;
  run: SupervisedRun;
}

/**
 * The store's whole restart path, in one place: which database is open (the file, a salvage of a
 * damaged one, a read-only card's copy in memory), what a swap carries from one database to the
 * next (held fixes and deliveries by event id), the watch for a read-only card that takes writes
 * again, and the fallback to the copy when a recovery fails. While it swaps, `restarting` says why
 * (the watchdog is fed with it).
 */
export class StoreSupervisor {
  readonly #o: StoreSupervisorOptions;
  /** Set while the components stop for a salvage of the damaged database; the next open salvages. */
  #repair: { reason: string; carry?: HeldFixes } | undefined;
  #repairing: Promise<void> | undefined;
  #restarting: string | undefined;
  /** What was held on a read-only card, from the restart until it is in the file (or held again). */
  #carry: HeldFixes | undefined;
  /** The watch for a read-only card that takes writes again, while on the copy. */
  #watch: WritableWatch | undefined;
  /** A restart on the writable card failed: the next open is the read-only copy again. */
  #stayReadOnly = false;
  /** Failed recoveries in a row: the writable watch asks again after a longer wait each time. */
  #failedRecoveries = 0;
  #readOnly = false;
  starting: Promise<void> | undefined;

  constructor(options: StoreSupervisorOptions) {
    this.#o = options;
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

  /**
   * The database: opened, salvaged, or the read-only copy, with what was carried stored into it
   * (fixes) or to be held by its outbox (`adopt`, on the copy).
   */
  open(options: OpenDatabaseOptions, storeLogger: Logger): { db: Database; readOnly: boolean; adopt?: HeldFixes } {
    const stayReadOnly = this.#stayReadOnly;
    const then = {
      ...(this.#repair ? { repair: this.#repair } : {}),
      ...(this.#carry && !stayReadOnly ? { carry: this.#carry } : {}),
      ...(stayReadOnly ? { stayReadOnly } : {}),
    };
    this.#stayReadOnly = false;
    const { db, readOnly } = openAgentDatabase(options, storeLogger, then);
    // Stored in the file (or about to be held by this read-only outbox): no longer only here.
    const adopt = readOnly ? this.#carry : undefined;
    this.#carry = undefined;
    this.#repair = undefined;
    this.#readOnly = readOnly;
    this.stopWatch();
    if (readOnly) this.#watchWritable();
    return { db, readOnly, ...(adopt ? { adopt } : {}) };
  }

  /** Stops the watch for a card that takes writes again (the daemon stops, or the file is open). */
  stopWatch(): void {
    this.#watch?.stop();
    this.#watch = undefined;
  }

  /** The first start of the daemon; agent.db taken by a directory runs on the copy instead of failing. */
  async startFirst(): Promise<void> {
    try {
      await this.#o.run.start();
    } catch (e) {
      // No restart cures it: the daemon stays up on the copy in memory (serving status, recording)
      // and the writable watch tries the file again later.
      if ((e as { code?: unknown }).code !== 'DATABASE_NOT_A_FILE' || this.#o.run.stopping()) throw e;
      this.#o.logger.error({ err: errorFields(e) }, 'the database cannot be used: recording into memory until it can');
      this.#failedRecoveries++;
      this.#stayReadOnly = true;
      await this.#o.run.start();
    }
  }

  /**
   * A statement met a damaged page at run time. The file must not be used any more: the store is
   * detached and closed (the outbox hands over what it holds in memory first), the file is moved
   * aside and salvaged into a fresh one, and the store is attached again on it.
   */
  onDamage(e: StoreError): void {
    if (this.#repairing || this.#o.run.stopping()) return;
    // A copy in memory of a read-only card is not the file: nothing to salvage.
    if (this.#readOnly) return;
    const reason = `${e.sqliteCode}: ${(e.cause as Error | undefined)?.message ?? e.message}`;
    this.#o.logger.error({ reason }, 'database damaged at run time: stopping, salvaging what is readable, starting again');
    this.#restart(reason, (carry) => {
      this.#repair = { reason, ...(carry ? { carry } : {}) };
    });
  }

  /** On a read-only card: once it takes writes, take its lock and start the store again on it. */
  #watchWritable(): void {
    const base = this.#o.readOnlyCheckMs ?? 2000;
    const watch = new WritableWatch({
      dataDir: this.#o.dataDir,
      // After a failed recovery on a writable card, ask again after 2x, 4x, ... up to a minute.
      intervalMs: Math.min(Math.max(base, 60_000), base * 2 ** this.#failedRecoveries),
      logger: this.#o.logger.child({ component: 'store' }),
      locks: this.#o.locks,
      onWritable: () =>
        this.#restart('the data directory is writable again', (carry) => {
          this.#carry = carry;
        }),
    });
    watch.start();
    this.#watch = watch;
  }

  /**
   * Detaches and closes the store, lets `handOver` take what its outbox held in memory, and opens
   * it again. The components over the handle go on (a start that failed half-way is started again).
   */
  #restart(why: string, handOver: (carry: HeldFixes | undefined) => void): void {
    if (this.#repairing || this.#o.run.stopping()) return;
    this.#restarting = `restarting the store: ${why}`.slice(0, 200);
    this.#repairing = (async () => {
      // Off the failing statement's stack before anything closes its database, and never while
      // start() is still building components on it.
      await new Promise((resolve) => setImmediate(resolve));
      await this.starting?.catch(() => undefined);
      // From here fixes and events wait in the handle's queue; answers to uploads in flight are
      // kept there by event id.
      handOver(this.#o.run.closeStore());
      if (!this.#o.run.started()) await this.#o.run.stop();
      this.#o.logger.info({ why }, 'opening the store again; the receiver, the platform and the uploader go on');
      await this.#startAgain();
    })().finally(() => {
      this.#repairing = undefined;
      this.#restarting = undefined;
    });
  }

  /**
   * The store opened again. A failed attempt loses nothing: what the carry and the attempt's
   * outbox hold is taken along. A damaged file is salvaged with it; any other failure
   * (the card read-only again, SQLITE_FULL or IOERR while storing what was held) goes back to the
   * read-only copy in memory with the fixes held there, and the writable watch asks again later.
   * Only when even that fails does the error reach the caller.
   */
  async #startAgain(): Promise<void> {
    const run = this.#o.run;
    for (let attempt = 1; ; attempt++) {
      const fallback = this.#stayReadOnly;
      try {
        if (run.started()) await run.openStore();
        else await run.start();
        if (!this.#readOnly) this.#failedRecoveries = 0;
        return;
      } catch (e) {
        if (run.stopping() || attempt >= 4) throw e;
        const fromAttempt = run.closeStore();
        const carry = mergeHeld(mergeHeld(this.#carry, this.#repair?.carry), fromAttempt);
        this.#repair = undefined;
        this.#carry = undefined;
        if (!run.started()) await run.stop();
        const held = carry?.rows.length ?? 0;
        if (isCorrupt(e) && !fallback) {
          const reason = describeError(e);
          this.#o.logger.error({ reason, held }, 'database damaged while starting again: salvaging what is readable, starting again');
          this.#repair = { reason, ...(carry ? { carry } : {}) };
        } else {
          this.#failedRecoveries++;
          this.#o.logger.error(
            { err: errorFields(e), held, failedRecoveries: this.#failedRecoveries },
            'starting the store again failed: back to the read-only copy in memory with what is held; the data directory is tried again later',
          );
          if (fallback) throw e;
          if (carry) this.#carry = carry;
          this.#stayReadOnly = true;
        }
      }
    }
  }
}
