import { errorFields } from '../errors.js';
import type { Config } from '../config/load.js';
import type { Logger } from '../log.js';
import type { Clock } from '../system/clock.js';
import type { HeldFixes } from './held.js';
import type { Database, OpenDatabaseOptions } from './database.js';
import type { FullDisk } from './full-disk.js';
import type { MetaStore } from './meta.js';
import { Outbox, type OutboxOptions } from './outbox/outbox.js';
import type { StoreHandle } from './store-handle.js';
import type { StoreSupervisor } from './store-supervisor.js';
import { openStores, type Stores } from './stores.js';

/** What the outbox needs of the platform side (platform/build.ts PlatformParts), built after the store. */
export interface OutboxPlatform {
  registrar: { identity(): Promise<OutboxOptions['identity']>; storeHeld(): void };
  tokens: { storeHeldPair(): void };
}

/** What the outbox is attached with, once the platform is built (agent.ts start). */
export interface OutboxPeers {
  platform: OutboxPlatform;
  /** Written with the outbox's minute counters, in the same transaction (the platform data counter). */
  persistWithCounters: (meta: MetaStore) => void;
}

export interface AgentStoreOptions {
  handle: StoreHandle;
  /** Chooses the database at each open: the file, a salvage, the read-only copy. */
  supervisor: StoreSupervisor;
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
}

/**
 * The daemon's store at each open (agent.ts builds it once; store-supervisor.ts opens and closes it
 * at each swap): the database the supervisor chooses, its record stores and its outbox, attached to
 * the handle the components hold (store-handle.ts); detached and closed again.
 */
export class AgentStore {
  readonly #o: AgentStoreOptions;
  readonly #dbOptions: OpenDatabaseOptions;
  /** Held fixes of a read-only copy, for the outbox built next (the supervisor's `adopt`). */
  #adopt: HeldFixes | undefined;
  #peers: OutboxPeers | undefined;

  constructor(options: AgentStoreOptions) {
    this.#o = options;
    const { fullDisk, supervisor } = options;
    this.#dbOptions = {
      dataDir: options.dataDir,
      clock: options.clock,
      logger: options.storeLogger,
      // Whichever writer meets the full disk first (outbox, token lock, token pair) releases the ballast for all.
      // Whichever reader or writer meets a damaged page (commit, token read, outbox read) has the file salvaged.
      onFault: (kind, e) => {
        if (kind === 'disk-full') fullDisk.enter({ code: e.sqliteCode, message: e.message });
        else supervisor.onDamage(e);
      },
      onProgress: options.onProgress,
    };
  }

  /**
   * The database (the file, a salvage, the read-only copy: the supervisor chooses) and its record
   * stores, attached to the handle; with `outbox`, its outbox too (the platform knows the identity).
   */
  async open(o: { outbox: boolean }): Promise<void> {
    const { db, readOnly, adopt } = this.#o.supervisor.open(this.#dbOptions, this.#o.storeLogger);
    this.#adopt = adopt;
    if (!readOnly) this.#o.fullDisk.start();
    let stores;
    try {
      stores = openStores(db);
      this.#o.onStores(stores);
    } catch (e) {
      db.close();
      throw e;
    }
    this.#o.handle.attach(db, stores);
    if (o.outbox) await this.#attachOutbox(this.#peers!);
  }

  /** The first outbox, once the platform is built; each later open() attaches one with the same peers. */
  async attachOutbox(peers: OutboxPeers): Promise<void> {
    this.#peers = peers;
    await this.#attachOutbox(peers);
  }

  /** The outbox over the attached database, the fixes a read-only copy held in it; then the queue flows to it. */
  async #attachOutbox(peers: OutboxPeers): Promise<void> {
    const { logger } = this.#o;
    const parts = this.#o.handle.parts!;
    const outbox = new Outbox({
      db: parts.db,
      meta: parts.stores.meta,
      identity: await peers.platform.registrar.identity(),
      storage: this.#o.storage,
      dataDir: this.#o.dataDir,
      clock: this.#o.clock,
      logger: logger.child({ component: 'outbox' }),
      fullDisk: this.#o.fullDisk,
      persistWithCounters: peers.persistWithCounters,
    });
    await outbox.start();
    const adopt = this.#adopt;
    this.#adopt = undefined;
    if (adopt) outbox.hold(adopt);
    this.#o.handle.attachOutbox(outbox);
    // What the platform holds in memory and the new records lack (a salvage carries no token,
    // identity nor registration over; a read-only copy took none) goes in now.
    peers.platform.tokens.storeHeldPair();
    peers.platform.registrar.storeHeld();
  }

  /**
   * Detaches the database from the handle and closes it. A swap releases the outbox (what only
   * memory held is returned, to be carried); the final stop commits what it buffers.
   */
  close(o: { final?: boolean } = {}): HeldFixes | undefined {
    const parts = this.#o.handle.detach();
    if (!parts) return undefined;
    let carry: HeldFixes | undefined;
    if (parts.outbox) {
      if (o.final) void parts.outbox.stop();
      else carry = this.#o.handle.release(parts);
    }
    closeQuietly(parts.db, this.#o.storeLogger);
    return carry;
  }
}

function closeQuietly(db: Database, logger: Logger): void {
  try {
    db.close();
  } catch (e) {
    logger.warn({ err: errorFields(e) }, 'closing the database failed');
  }
}
