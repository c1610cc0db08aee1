import type { Logger } from '../../log.js';
import type { TokenCounter, TokenRecords } from './token-records.js';
import type { Clock } from '../../system/clock.js';
import type { HeldToken } from './held-token.js';
import type { BootClock } from '../../system/boot-clock.js';
import { storeErrorCode } from './token-bookkeeping.js';

/** When a pair was received: wall time for the record, boot clock for its age. */
export interface ReceiptStamp {
  wallMs: number;
  bootId: string;
  bootMs: number;
}

/** A pair received while the database could not be written: used from memory, stored later. */
interface Unsaved {
  held: HeldToken;
  stamp: ReceiptStamp;
  counts: Partial<Record<TokenCounter, number>>;
  /** Monotonic time of the last attempt to store it. */
  triedAtMs: number;
}

/** How often a pair kept in memory is offered to the database again. */
const UNSAVED_RETRY_MS = 5_000;

export interface UnsavedPairOptions {
  store: TokenRecords;
  clock: Clock;
  logger: Logger;
}

/** Commits new token pairs, keeping one in memory while the database cannot be written. */
export class UnsavedPair {
  readonly #options: UnsavedPairOptions;
  #unsaved: Unsaved | undefined;

  constructor(options: UnsavedPairOptions) {
    this.#options = options;
  }

  /** The pair kept in memory, if the last one received could not be stored. */
  get pending(): { held: HeldToken; stamp: ReceiptStamp } | undefined {
    return this.#unsaved;
  }

  /** Stores a new pair (counting it under `counter`); when that fails, keeps it to be stored later. */
  commit(held: HeldToken, stamp: ReceiptStamp, counter: TokenCounter): void {
    const counts = { ...(this.#unsaved?.counts ?? {}) };
    counts[counter] = (counts[counter] ?? 0) + 1;
    const unsaved: Unsaved = { held, stamp, counts, triedAtMs: this.#options.clock.monotonicMs() };
    try {
      this.#options.store.commit(held.pair, held.generation, stamp, counts);
      this.#unsaved = undefined;
    } catch (e) {
      // The pair is good and the old refresh token may already be spent on the server,
      // so the pair is used from memory and stored when writing works again (retry). What a crash
      // in this window costs: the database still holds the previous pair, whose refresh token the
      // server has rotated away; the next process refreshes with it, gets 401, and makes one
      // password grant, which the platform contract (Tokens) allows after exactly that 401. Nothing else is lost.
      this.#unsaved = unsaved;
      this.#options.logger.warn(
        { generation: held.generation, code: storeErrorCode(e) },
        'a new token pair could not be stored (disk full or database busy?): using it from memory, storing it when writing works again',
      );
    }
  }

  /** Offers a pair kept in memory to the database again (on token use and on the maintenance timer). */
  retry(force: boolean): void {
    const u = this.#unsaved;
    if (!u) return;
    const nowMs = this.#options.clock.monotonicMs();
    if (!force && nowMs - u.triedAtMs < UNSAVED_RETRY_MS) return;
    u.triedAtMs = nowMs;
    try {
      const stored = this.#options.store.commit(u.held.pair, u.held.generation, u.stamp, u.counts);
      this.#unsaved = undefined;
      this.#options.logger.info(
        { generation: u.held.generation, stored },
        stored
          ? 'the token pair kept in memory is stored now'
          : 'another process stored a newer token pair meanwhile; keeping ours in memory only',
      );
    } catch {
      // Still not writable: tried again later.
    }
  }

  /**
   * The records were swapped under the platform (store-handle.ts): the pair kept in memory goes in,
   * or, when none is, the pair in use, if the records hold an older one (a salvage carries no token
   * row over; the pair in memory was never in the damaged file's care).
   */
  storeInto(inUse: HeldToken | undefined, bootClock: BootClock): void {
    this.retry(true);
    if (this.#unsaved || !inUse) return;
    try {
      if ((this.#options.store.read()?.generation ?? 0) >= inUse.generation) return;
      // A pair of an earlier boot not renewed yet (platform unreachable) is stored as of no boot:
      // read back it is due at once, as now, and its refresh token is not lost to a password grant.
      const received = inUse.receivedAtMs;
      const stamp =
        received === undefined
          ? { wallMs: this.#options.clock.wallMs() - inUse.pair.expiresInS * 1000, bootId: '', bootMs: 0 }
          : { wallMs: this.#options.clock.wallMs() - (bootClock.nowMs() - received), bootId: bootClock.bootId, bootMs: received };
      this.#options.store.commit(inUse.pair, inUse.generation, stamp, {});
      this.#options.logger.info({ generation: inUse.generation }, 'the token pair in use is stored in the new database');
    } catch {
      // A read-only copy: the pair stays in use from memory; a later renewal stores its successor.
    }
  }
}
