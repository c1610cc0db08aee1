import { errorFields, type StoreError } from '../errors.js';
import type { Config } from '../config/load.js';
import type { Logger } from '../log.js';
import type { Clock } from '../system/clock.js';
import { openNextDatabase, type NextDatabase } from './database-choice.js';
import type { Database, OpenDatabaseOptions } from './database.js';
import type { FullDisk } from './full-disk.js';
import { mergeHeld, type HeldFixes } from './held.js';
import type { MetaStore } from './meta.js';
import { Outbox, type OutboxOptions } from './outbox/outbox.js';
import type { StoreHandle, StoreParts } from './store-handle.js';
import { openStores, type Stores } from './stores.js';

/** What the outbox needs of the platform side (platform/build.ts PlatformParts), built after the store. */
export interface OutboxPlatform {
  registrar: { identity(): Promise<OutboxOptions['identity']>; storeHeld(): void };
  tokens: { storeHeldPair(): void };
}

/** What the outbox is built with, once the platform is built (agent.ts start). */
export interface OutboxPeers {
  platform: OutboxPlatform;
  /** Written with the outbox's minute counters, in the same transaction (the platform data counter). */
  persistWithCounters: (meta: MetaStore) => void;
}

export interface StoreSwapOptions {
  handle: StoreHandle;
  fullDisk: FullDisk;
  storage: Config['storage'];
  dataDir: string;
  clock: Clock;
  /** The daemon's logger: the outbox logs under its own component. */
  logger: Logger;
  storeLogger: Logger;
  /** The watchdog is fed while a long salvage runs. */
  onProgress: () => void;
  /** Each database's record stores once opened, before they are attached (status reads its last salvage). */
  onStores: (stores: Stores) => void;
  /** A reader or writer met a damaged page: the supervisor decides the salvage. */
  onDamage: (e: StoreError) => void;
  /** A database was opened (the supervisor watches a read-only card for writes). */
  onOpen: (readOnly: boolean) => void;
}

/**
 * The one owner of a swap of the database under the components (docs/decisions/store-handle.md),
 * one verb a step, called in this order by the supervisor (store-supervisor.ts), which decides when:
 *
 * 1. pause: the handle lets go of the database; the queue keeps what is recorded.
 * 2. takeHeld: the paused outbox gives up what only its memory held (held.ts).
 * 3. close: the paused database is closed.
 * 4. open: the next database (database-choice.ts), what was held stored into it, and its records.
 * 5. attach: the handle takes the new database and its records.
 * 6. resume: its outbox is built (holding what a read-only copy keeps), the queue flows to it.
 *
 * The first start of the daemon is steps 4 to 6 (agent.ts), its final stop is pause and close
 * with the outbox's last commit between them (stop).
 */
export class StoreSwap {
  readonly #options: StoreSwapOptions;
  readonly #dbOptions: OpenDatabaseOptions;
  /** The supervisor's choice for the next open; what was held is the swap's own (#held). */
  next: Omit<NextDatabase, 'held'> = {};
  /** What paused outboxes held, from takeHeld until an open stores it (or a read-only copy takes it: #toHold). */
  #held: HeldFixes | undefined;
  /** What the read-only copy's outbox holds once resumed. */
  #toHold: HeldFixes | undefined;
  /** From pause until close. */
  #paused: StoreParts | undefined;
  /** From open until attach. */
  #opened: { db: Database; stores: Stores } | undefined;
  #peers: OutboxPeers | undefined;

  constructor(options: StoreSwapOptions) {
    this.#options = options;
    const { fullDisk } = options;
    this.#dbOptions = {
      dataDir: options.dataDir,
      clock: options.clock,
      logger: options.storeLogger,
      // Whichever writer meets the full disk first (outbox, token lock, token pair) releases the ballast for all.
      // Whichever reader or writer meets a damaged page (commit, token read, outbox read) has the file salvaged.
      onFault: (kind, e) => {
        if (kind === 'disk-full') fullDisk.enter({ code: e.sqliteCode, message: e.message });
        else options.onDamage(e);
      },
      onProgress: options.onProgress,
    };
  }

  /** How many held fixes wait for the next open (or for the read-only copy's outbox to take them). */
  get heldCount(): number {
    return (this.#held?.rows.length ?? 0) + (this.#toHold?.rows.length ?? 0);
  }

  /** 1. From here nothing reaches the database: records are refused, the queue keeps what is recorded. */
  pause(): void {
    this.#paused = this.#options.handle.pause();
  }

  /** 2. What the paused outbox held only in memory (with the deliveries since its last delete), kept for the next open. */
  takeHeld(): void {
    const outbox = this.#paused?.outbox;
    if (outbox) this.#held = mergeHeld(this.#held, outbox.takeHeld());
  }

  /** 3. The paused database closed. */
  close(): void {
    const parts = this.#paused;
    this.#paused = undefined;
    if (parts) closeQuietly(parts.db, this.#options.storeLogger);
  }

  /** 4. The next database (the file, a salvage, the read-only copy: `next`) with what was held, and its record stores. */
  open(): void {
    // What a read-only copy was to hold when that attempt failed before its outbox took it.
    this.#held = mergeHeld(this.#held, this.#toHold);
    this.#toHold = undefined;
    const { salvage, readOnlyAgain } = this.next;
    // A fallback to the copy is spent by this attempt; a salvage is retried until one opens.
    this.next = salvage === undefined ? {} : { salvage };
    const { db, readOnly } = openNextDatabase(this.#dbOptions, this.#options.storeLogger, { salvage, readOnlyAgain, held: this.#held });
    // Stored in the file (or about to be held by this read-only copy's outbox): no longer only here.
    this.#toHold = readOnly ? this.#held : undefined;
    this.#held = undefined;
    this.next = {};
    this.#options.onOpen(readOnly);
    if (!readOnly) this.#options.fullDisk.start();
    let stores;
    try {
      stores = openStores(db);
      this.#options.onStores(stores);
    } catch (e) {
      db.close();
      throw e;
    }
    this.#opened = { db, stores };
  }

  /** 5. The handle takes the database open() gave: records work again. */
  attach(): void {
    const opened = this.#opened;
    this.#opened = undefined;
    if (opened) this.#options.handle.attach(opened.db, opened.stores);
  }

  /**
   * 6. The outbox over the attached database, holding what a read-only copy keeps; the queue flows
   * to it. The first resume is given the platform (agent.ts start), each later one has the same.
   */
  async resume(peers?: OutboxPeers): Promise<void> {
    if (peers) this.#peers = peers;
    const { platform, persistWithCounters } = this.#peers!;
    const parts = this.#options.handle.parts!;
    const outbox = new Outbox({
      db: parts.db,
      meta: parts.stores.meta,
      identity: await platform.registrar.identity(),
      storage: this.#options.storage,
      dataDir: this.#options.dataDir,
      clock: this.#options.clock,
      logger: this.#options.logger.child({ component: 'outbox' }),
      fullDisk: this.#options.fullDisk,
      persistWithCounters,
    });
    await outbox.start();
    const held = this.#toHold;
    if (held) outbox.hold(held);
    // The outbox has them now: the handle takes it first thing in resume, so a later failure's
    // pause gets them back from it (clearing later would store them twice).
    this.#toHold = undefined;
    this.#options.handle.resume(outbox);
    // What the platform holds in memory and the new records lack (a salvage carries no token,
    // identity nor registration over; a read-only copy took none) goes in now.
    platform.tokens.storeHeldPair();
    platform.registrar.storeHeld();
  }

  /** The daemon stops: pause, the outbox commits what it buffers, close. */
  stop(): void {
    this.pause();
    void this.#paused?.outbox?.stop();
    this.close();
  }
}

function closeQuietly(db: Database, logger: Logger): void {
  try {
    db.close();
  } catch (e) {
    logger.warn({ err: errorFields(e) }, 'closing the database failed');
  }
}
