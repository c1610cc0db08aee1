import { AgentError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Database } from './database.js';
import type { Outbox, OutboxCommitState, OutboxStatus } from './outbox/outbox.js';
import { StoreQueue } from './store-queue.js';
import type { Stores } from './stores.js';

/** The database of the moment and the objects bound to it. */
export interface StoreParts {
  db: Database;
  stores: Stores;
  outbox?: Outbox;
}

/** What status and the watchdog read of the outbox, answered from the last one while paused. */
export interface OutboxView {
  status(): OutboxStatus;
  commitState(): OutboxCommitState;
  pendingCount(): number;
  oldestPendingAgeMs(): number;
}

/**
 * The swappable store under the record interfaces (docs/decisions/store-handle.md). The platform,
 * the uploader, the receiver, the motion tracker and the status socket are built once over
 * `stores`, `queue` and `outbox`; the store supervisor swaps the database and the objects bound to
 * it (a salvage, a read-only card's copy, a recovery: store-swap.ts) without any of them restarting.
 *
 * Between pause() and the next attach the records throw a transient STORE_RESTARTING (their
 * callers keep what they could not write in memory and try again, as on a busy or full disk) and
 * the queue holds what is recorded (store-queue.ts).
 */
export class StoreHandle {
  #parts: StoreParts | undefined;
  /** The last outbox's figures, for status while paused. */
  #lastView: { status: OutboxStatus; commitState: OutboxCommitState } | undefined;
  readonly queue: StoreQueue;
  /** The record stores of the moment, each call forwarded (platform/build.ts takes them as its records). */
  readonly stores: Stores;
  readonly outbox: OutboxView;

  constructor(logger: Pick<Logger, 'error'>) {
    this.queue = new StoreQueue(logger);
    this.stores = {
      meta: forward(() => this.#current().stores.meta),
      tokens: forward(() => this.#current().stores.tokens),
      devices: forward(() => this.#current().stores.devices),
    };
    const view = (): OutboxView | undefined => this.#parts?.outbox;
    // Never throws while paused: status is asked exactly then (the supervisor's `restarting` says why).
    const last = (): OutboxStatus => this.#lastView?.status ?? this.#noView();
    this.outbox = {
      status: () => view()?.status() ?? last(),
      commitState: () => view()?.commitState() ?? this.#lastView?.commitState ?? { buffered: 0, bound: 0, lowDisk: false },
      pendingCount: () => view()?.pendingCount() ?? last().pending,
      oldestPendingAgeMs: () => view()?.oldestPendingAgeMs() ?? last().oldestPendingAgeMs ?? 0,
    };
  }

  /** The database of the moment, if one is attached. */
  get parts(): StoreParts | undefined {
    return this.#parts;
  }

  /** A new database and its record stores (the outbox follows once built: resume). */
  attach(db: Database, stores: Stores): void {
    this.#parts = { db, stores };
  }

  /** The outbox of the attached database: the queue flows to it. */
  resume(outbox: Outbox): void {
    const parts = this.#current();
    parts.outbox = outbox;
    this.queue.resume(outbox);
  }

  /**
   * From here nothing reaches the database: the caller takes what the outbox held and closes the
   * database it gets back (store-swap.ts).
   */
  pause(): StoreParts | undefined {
    const parts = this.#parts;
    if (!parts) return undefined;
    if (parts.outbox) {
      try {
        this.#lastView = { status: parts.outbox.status(), commitState: parts.outbox.commitState() };
      } catch {
        // A damaged file may not answer: status shows the figures before.
      }
    }
    this.queue.pause();
    this.#parts = undefined;
    return parts;
  }

  /** No figures from the outbox before (a damaged file that never answered): what the queue holds. */
  #noView(): OutboxStatus {
    const waiting = this.queue.waiting;
    return {
      pending: waiting,
      buffered: waiting,
      bound: 0,
      lowDisk: false,
      sentTotal: 0,
      sentToday: 0,
      thinned: 0,
      deadLetters: 0,
      noPosition: 0,
      eventsRefused: 0,
      diskFullEvents: 0,
    };
  }

  #current(): StoreParts {
    const parts = this.#parts;
    if (!parts)
      throw new AgentError('STORE_RESTARTING', 'the database is being reopened (salvage or read-only card)', { class: 'transient' });
    return parts;
  }
}

/** An object that forwards every call to what `target()` gives at the moment of the call. */
function forward<T extends object>(target: () => T): T {
  return new Proxy({} as T, {
    get(_, key) {
      const t = target();
      const v = Reflect.get(t, key, t) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(t) : v;
    },
  });
}
