import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { isCorrupt, PlatformError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { LockHolder, StoredToken, TokenRecords } from './token-records.js';
import type { Clock } from '../../system/clock.js';
import { bookkeepingWrite, storeErrorCode } from './token-bookkeeping.js';

export interface TokenLockTuning {
  /** Give up waiting for another process's token lock after this long. */
  lockWaitMs: number;
  /** A lock older than this is abandoned, even if its process still runs. */
  lockStaleMs: number;
}

export interface TokenLockOptions {
  store: TokenRecords;
  /** Wall time: the lock row records when it was taken. */
  clock: Clock;
  logger: Logger;
  tuning: TokenLockTuning;
  /** Aborts a wait for another holder (the token manager is stopping). */
  signal: AbortSignal;
}

/** A held token lock: the stored pair read under it, and whether it is the cross-process row. */
export interface TokenLockHeld {
  stored: StoredToken | undefined;
  shared: boolean;
}

/** The cross-process token lock: a lock row in the database, so that one process renews at a time. */
export class TokenLock {
  readonly #options: TokenLockOptions;
  readonly #owner = `${process.pid}:${randomUUID()}`;

  constructor(options: TokenLockOptions) {
    this.#options = options;
  }

  /**
   * Takes the cross-process token lock, waiting for another holder; returns the pair read under it.
   * When the lock row cannot be written (disk full) the in-process single flight is the
   * only lock: delivery must not stop for it. Another process renewing at the same moment could then
   * send the same refresh token; the loser's 401 costs one password grant, no data.
   */
  async acquire(): Promise<TokenLockHeld> {
    const { clock, tuning, store, logger } = this.#options;
    const pollMs = 25;
    let announced = false;
    for (let waited = 0; ; waited += pollMs) {
      let r: ReturnType<TokenRecords['tryLock']>;
      try {
        r = store.tryLock(this.#owner, clock.wallMs(), (h) => this.#isStale(h));
      } catch (e) {
        // A damaged file, or the store detached for a swap (store-handle.ts): no stored pair is
        // readable, and renewing from none would be a password grant the refresh token we hold forbids.
        if (isCorrupt(e) || (e as { code?: unknown }).code === 'STORE_RESTARTING') throw e;
        logger.warn(
          { code: storeErrorCode(e) },
          'the token lock cannot be written to the database (disk full?): renewing under the in-process lock only',
        );
        return { stored: this.#readStored(), shared: false };
      }
      if (r.acquired) return { stored: r.stored, shared: true };
      if (!announced) logger.debug({ holderPid: r.holder?.pid }, 'another process is renewing the token: waiting for it');
      announced = true;
      if (waited >= tuning.lockWaitMs) {
        throw new PlatformError(
          'TOKEN_LOCK_BUSY',
          `another process (pid ${r.holder?.pid}) has been renewing the token for over ${tuning.lockWaitMs} ms`,
          { class: 'transient', retryAfterMs: 1000 },
        );
      }
      await sleep(pollMs, undefined, { signal: this.#options.signal });
    }
  }

  /** Releases a lock taken by acquire() (the in-process fallback has no row to remove). */
  release(lock: TokenLockHeld): void {
    if (lock.shared) bookkeepingWrite(this.#options.logger, 'token unlock', () => this.#options.store.unlock(this.#owner));
  }

  #readStored(): StoredToken | undefined {
    try {
      return this.#options.store.read();
    } catch (e) {
      this.#options.logger.warn({ code: storeErrorCode(e) }, 'the stored token pair cannot be read');
      return undefined;
    }
  }

  #isStale(holder: LockHolder): boolean {
    const age = this.#options.clock.wallMs() - holder.acquiredAt;
    // A wall clock that stepped (NTP at boot) must not keep a lock for ever: either direction counts.
    if (age > this.#options.tuning.lockStaleMs || age < -60_000) return true;
    return !processAlive(holder.pid);
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
