import { passwordFixHint } from '../../config/password-source.js';
import { AgentError, errorFields } from '../../errors.js';
import type { Logger } from '../../log.js';
import { systemTimers } from '../../system/clock.js';
import { abortable } from '../transport/abortable.js';
import type { TokenStatus } from '../contracts.js';
import { heldFromStored, type HeldToken as Held } from './held-token.js';
import { PasswordWatch } from './password-watch.js';
import { TokenBackoff } from './token-backoff.js';
import { bookkeepingWrite } from './token-bookkeeping.js';
import { TokenClient } from './token-client.js';
import { TokenLock } from './token-lock.js';
import type { AccessGrant, TokenManagerOptions } from './token-manager-options.js';
import { checkStoredPair, type TokenPair } from './token-pair.js';
import { UnsavedPair } from './unsaved-pair.js';
import { renewAfterMs, waitsForRequest } from './renewal-timing.js';
import type { StoredToken, TokenCounter, TokenRecords } from './token-records.js';

type Reason = 'none' | 'due' | 'rejected';

/**
 * The token lifecycle (docs/platform-contract.md, Tokens):
 * - the password grant only when there is no refresh token or the refresh itself answered 401
 *   (5.7); a rejected password backs off for minutes up to an hour, never loops, and a password
 *   file fixed in place is read again (and tried at once when it changed);
 * - a refresh shortly before the lifetime, measured on the boot clock from receipt, runs out, while
 *   requests use the token (idle: at the next request, or once the pair is idleRefreshAgeS old), and
 *   after any 401 of a service (5.5, 5.6);
 * - a refresh whose answer never came (dropped connection, timeout, 5xx, a malformed pair) is
 *   retried with the same refresh token at the token service's backoff: the old refresh token is
 *   discarded only when a new one was received (5.6), and only a 401 of the refresh leads to the
 *   password (5.7). A crash during a refresh ('sending' left in the database) is the same case;
 * - a new pair is committed before it is used; when the database cannot be written (disk full,
 *   busy) it is used from memory and stored as soon as writing works again;
 * - single flight: one renewal at a time in this process (a shared promise) and across processes
 *   (a lock row in the database, the stored pair re-read under it; an in-process lock only while
 *   the database cannot be written).
 */
export class TokenManager {
  readonly #options: TokenManagerOptions;
  readonly #store: TokenRecords;
  readonly #client: TokenClient;
  readonly #backoff: TokenBackoff;
  readonly #stopping = new AbortController();
  readonly #lock: TokenLock;
  readonly #unsaved: UnsavedPair;
  readonly #passwordWatch: PasswordWatch;
  #held: Held | undefined;
  #inflight: Promise<Held> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #lastError: { code: string; message: string } | undefined;
  /** Monotonic ms of the last request that asked for a token. */
  #lastUseMs: number | undefined;
  readonly #counts = { passwordGrants: 0, refreshes: 0 };
  /** The generation whose refresh token the token service rejected, in case the database could not record it. */
  #spentGeneration: number | undefined;

  constructor(options: TokenManagerOptions) {
    this.#options = options;
    this.#store = options.records;
    this.#client = new TokenClient({
      http: options.http,
      authUrl: options.authUrl,
      clock: options.clock,
      ...(options.redactor ? { redactor: options.redactor } : {}),
    });
    this.#backoff = new TokenBackoff(options.tuning, options.random ?? Math.random, { ...options, timers: systemTimers });
    const { clock, logger, tuning } = options;
    this.#lock = new TokenLock({ store: this.#store, clock, logger, tuning, signal: this.#stopping.signal });
    this.#unsaved = new UnsavedPair({ store: this.#store, clock, logger });
    this.#passwordWatch = new PasswordWatch({ password: options.credentials.password, clock, logger, backoff: this.#backoff });
  }

  /** Keeps the token fresh in the background while in use, and an idle agent's refresh token from lapsing. */
  async start(): Promise<void> {
    this.#timer = setInterval(() => void this.maintain(), this.#options.tuning.maintainIntervalMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#stopping.abort();
    this.#backoff.stop();
    await this.#inflight?.catch(() => undefined);
    this.#unsaved.retry(true);
  }

  /** The records were swapped (store-handle.ts): the pair held in memory goes in, unless they hold a newer one. */
  storeHeldPair(): void {
    this.#unsaved.storeInto(this.#held, this.#options.bootClock);
  }

  /** A valid access token: the one held, or a renewed one when none is held or it is due. */
  async accessToken(signal?: AbortSignal): Promise<AccessGrant> {
    this.#lastUseMs = this.#options.clock.monotonicMs();
    const held = this.#held;
    this.#unsaved.retry(false);
    if (held && !this.#isDue(held)) return grant(held);
    return grant(await this.#renew(held ? 'due' : 'none', held?.generation ?? 0, signal));
  }

  /** A service answered 401 to the token of `generation`: a newer token (one refresh, shared). */
  async renewAfterUnauthorized(generation: number, signal?: AbortSignal): Promise<AccessGrant> {
    this.#lastUseMs = this.#options.clock.monotonicMs();
    const held = this.#held;
    if (held && held.generation > generation) return grant(held);
    return grant(await this.#renew('rejected', generation, signal));
  }

  /**
   * Renews when the held token is due and requests use it, or when an idle agent's pair reached
   * idleRefreshAgeS; failures are logged and left for the next request.
   */
  async maintain(): Promise<void> {
    this.#unsaved.retry(false);
    const held = this.#held;
    if (!held || !this.#isDue(held) || this.#inflight) return;
    if (this.#waitsForRequest(held)) return;
    await this.#renew('due', held.generation).catch(() => undefined);
  }

  /** Idle, and the pair young enough: the next request renews it (one wake-up, not two). */
  #waitsForRequest(h: Held): boolean {
    return waitsForRequest(this.#options.tuning, {
      nowMonoMs: this.#options.clock.monotonicMs(),
      lastUseMs: this.#lastUseMs,
      nowBootMs: this.#options.bootClock.nowMs(),
      receivedAtMs: h.receivedAtMs,
    });
  }

  tokenStatus(): TokenStatus {
    const nowMono = this.#options.clock.monotonicMs();
    const retryAt = this.#backoff.rejectedUntilWall(nowMono);
    const held = this.#held;
    const ageMs = held?.receivedAtMs !== undefined ? Math.max(0, this.#options.bootClock.nowMs() - held.receivedAtMs) : undefined;
    let state: TokenStatus['state'] = 'none';
    if (retryAt !== undefined) state = 'rejected';
    else if (this.#inflight) state = 'refreshing';
    else if (held) state = ageMs !== undefined && ageMs < held.pair.expiresInS * 1000 ? 'valid' : 'expired';
    const waits = held !== undefined && this.#waitsForRequest(held);
    return {
      state,
      ...(ageMs !== undefined ? { ageMs } : {}),
      ...(held ? { renewAfterMs: this.#renewAfterMs(held) } : {}),
      ...(held ? { renewal: waits ? 'next-request' : 'ahead' } : {}),
      ...(held && this.#options.tuning.keepFreshS !== undefined && this.#options.tuning.idleRefreshAgeS !== undefined
        ? { idleRenewAfterMs: Math.max(this.#renewAfterMs(held), this.#options.tuning.idleRefreshAgeS * 1000) }
        : {}),
      ...(retryAt !== undefined ? { retryAt } : {}),
      ...(this.#lastError ? { lastError: this.#lastError } : {}),
      ...this.#counts,
    };
  }

  #isDue(h: Held): boolean {
    if (h.receivedAtMs === undefined) return true;
    return this.#options.bootClock.nowMs() - h.receivedAtMs >= this.#renewAfterMs(h);
  }

  #renewAfterMs(h: Held): number {
    return renewAfterMs(h.pair.expiresInS, this.#options.tuning.refreshMarginS);
  }

  async #renew(reason: Reason, generation: number, signal?: AbortSignal): Promise<Held> {
    // At most twice: a caller whose rejected token is the one a running renewal just produced
    // needs one renewal of its own.
    for (let round = 0; ; round++) {
      if (!this.#inflight) {
        this.#inflight = this.#renewUnderLock(reason, generation).finally(() => {
          this.#inflight = undefined;
        });
      }
      const held = await abortable(this.#inflight, signal);
      if (reason !== 'rejected' || held.generation > generation || round >= 1) return held;
    }
  }

  async #renewUnderLock(reason: Reason, generation: number): Promise<Held> {
    try {
      // The stored pair first: an agent restarted with a valid one renews nothing, so it neither
      // waits for the start-up spread nor takes the lock (platform.startupJitterS).
      const stored = reason === 'none' ? this.#usableStored() : undefined;
      if (stored) return stored;
      // Only a real refresh or password grant follows: spread it, before taking the lock.
      await this.#options.startSpread?.wait(this.#stopping.signal, 'token');
      this.#passwordWatch.check();
      this.#backoff.check(this.#options.clock.monotonicMs());
      const lock = await this.#lock.acquire();
      try {
        const held = await this.#renewLocked(reason, generation, lock.stored);
        this.#backoff.succeeded();
        this.#lastError = undefined;
        this.#passwordWatch.accepted();
        return held;
      } finally {
        this.#lock.release(lock);
      }
    } catch (e) {
      if (e instanceof AgentError) this.#lastError = { code: e.code, message: e.message };
      throw e;
    }
  }

  async #renewLocked(reason: Reason, generation: number, stored: StoredToken | undefined): Promise<Held> {
    const current = this.#current(stored);
    if (current && current.refreshState === 'usable' && current.generation > generation) {
      // Another process (or an earlier renewal) already rotated: use its pair, do not refresh again.
      const candidate = heldFromStored(current, this.#options.bootClock);
      if (!this.#isDue(candidate)) return this.#adopt(candidate, reason === 'none' ? 'stored pair' : 'pair rotated by another process');
    }
    if (current && current.refreshState !== 'spent') {
      if (current.refreshState === 'sending') {
        this.#options.logger.warn(
          { generation: current.generation },
          'a token refresh was interrupted (process killed?): retrying it with the same refresh token, which is discarded only when a new one arrives',
        );
      }
      const refreshed = await this.#refresh(current);
      if (refreshed) return refreshed;
    }
    return this.#passwordGrant(current?.generation ?? stored?.generation ?? 0);
  }

  /**
   * The stored pair when it can be used as it is (checked, not spent, not due), read without the
   * lock: a committed pair is read whole, and a pair another process rotates meanwhile answers 401,
   * which renewAfterUnauthorized handles. Anything else (none, malformed, due, unreadable) is left
   * to the renewal under the lock.
   */
  #usableStored(): Held | undefined {
    if (this.#unsaved.pending) return undefined;
    let stored: StoredToken | undefined;
    try {
      stored = this.#store.read();
    } catch {
      return undefined;
    }
    if (!stored || stored.refreshState !== 'usable' || this.#spentGeneration === stored.generation) return undefined;
    const checked = checkStoredPair(stored.pair);
    if (!checked.ok) return undefined;
    const candidate = heldFromStored({ ...stored, pair: checked.pair }, this.#options.bootClock);
    if (this.#isDue(candidate)) return undefined;
    this.#backoff.succeeded();
    this.#lastError = undefined;
    return this.#adopt(candidate, 'stored pair');
  }

  /**
   * The pair to renew from: the stored one, checked (a malformed stored pair is
   * discarded, never sent), or the one held in memory when it is newer (it could not be stored).
   */
  #current(stored: StoredToken | undefined): StoredToken | undefined {
    const unsaved = this.#unsaved.pending;
    if (unsaved && unsaved.held.generation > (stored?.generation ?? 0)) {
      const { pair, generation, receivedAtMs } = unsaved.held;
      return {
        pair,
        generation,
        obtainedAtWallMs: unsaved.stamp.wallMs,
        bootId: this.#options.bootClock.bootId,
        bootMs: receivedAtMs,
        refreshState: this.#spentGeneration === generation ? 'spent' : 'usable',
      };
    }
    if (!stored) return undefined;
    const checked = checkStoredPair(stored.pair);
    if (!checked.ok) {
      const empty = stored.pair.accessToken === '' && stored.pair.refreshToken === '';
      if (!empty) {
        this.#options.logger.warn(
          { generation: stored.generation, code: 'TOKEN_PAIR_MALFORMED', problem: checked.problem },
          'the stored token pair is malformed and is discarded; a new pair is requested',
        );
        bookkeepingWrite(this.#options.logger, 'discard malformed token pair', () => this.#store.discard(stored.generation));
      }
      return undefined;
    }
    const spent = this.#spentGeneration === stored.generation;
    for (const t of [checked.pair.accessToken, checked.pair.refreshToken]) this.#options.redactor?.remember(t);
    return { ...stored, pair: checked.pair, refreshState: spent ? 'spent' : stored.refreshState };
  }

  async #refresh(current: StoredToken): Promise<Held | undefined> {
    const { clock, logger } = this.#options;
    // Recorded before the refresh token goes out, so that a process killed before the answer is
    // committed tells the next one (which then retries with the same token and logs it). Best
    // effort: on a full disk the refresh goes ahead without the note.
    bookkeepingWrite(this.#options.logger, 'refresh state', () => this.#store.setRefreshState(current.generation, 'sending'));
    const outcome = await this.#client.refresh(current.pair.refreshToken, this.#stopping.signal);
    if (outcome.kind === 'pair') return this.#commit(outcome.pair, current.generation, 'auth.refreshes');
    if (outcome.kind === 'rejected') {
      // Spec 3, last row and 5.7: only now is the password grant allowed again.
      this.#spentGeneration = current.generation;
      bookkeepingWrite(this.#options.logger, 'refresh state', () => this.#store.setRefreshState(current.generation, 'spent'));
      logger.info(
        { generation: current.generation, platformMessage: outcome.error.details?.platformMessage },
        'refresh token rejected (expired): using the password grant, as the platform allows after exactly that',
      );
      return undefined;
    }
    // No answer (the request may or may not have been acted on), a 5xx, a malformed pair: the
    // refresh token is kept and sent again after the backoff. Had the server rotated it, the retry
    // answers 401, which is what allows the password grant (platform contract, Tokens).
    bookkeepingWrite(this.#options.logger, 'refresh state', () => this.#store.setRefreshState(current.generation, 'usable'));
    const error = this.#backoff.serviceFailed(clock.monotonicMs(), clock.wallMs(), outcome.error);
    logger.warn(
      { err: errorFields(outcome.error), mayHaveArrived: outcome.mayHaveArrived, retryInMs: error.retryAfterMs },
      'token refresh failed; retrying with the same refresh token after the backoff',
    );
    throw error;
  }

  async #passwordGrant(previousGeneration: number): Promise<Held> {
    const { clock, logger, credentials } = this.#options;
    let outcome;
    try {
      outcome = await this.#client.password(credentials.username, credentials.password, this.#stopping.signal);
    } catch (e) {
      // The password file cannot be read now (ConfigError naming the key): this attempt fails like
      // a rejection, with the same slow backoff; the file is read again before the next one.
      if (!(e instanceof AgentError) || e.errorClass !== 'config') throw e;
      const error = this.#backoff.credentialsRejected(clock.monotonicMs(), clock.wallMs(), e.message);
      logger.error(
        { err: errorFields(e), retryInMs: error.retryAfterMs },
        'the password cannot be read; it is read again before the next attempt',
      );
      throw error;
    }
    if (outcome.kind === 'pair') return this.#commit(outcome.pair, previousGeneration, 'auth.passwordGrants');
    if (outcome.kind === 'rejected') {
      const platformMessage = String(outcome.error.details?.platformMessage ?? '');
      const nowMs = clock.monotonicMs();
      let fix = '';
      const error = this.#backoff.credentialsRejected(nowMs, clock.wallMs(), platformMessage, (retryAtWallMs) => {
        fix = passwordFixHint(credentials.password, retryAtWallMs);
        return fix;
      });
      this.#passwordWatch.rejected(nowMs);
      logger.error(
        { username: credentials.username, platformMessage, retryInMs: error.retryAfterMs },
        `credentials rejected by the token service; ${fix}`,
      );
      throw error;
    }
    const error = this.#backoff.serviceFailed(clock.monotonicMs(), clock.wallMs(), outcome.error);
    logger.warn({ err: errorFields(outcome.error), retryInMs: error.retryAfterMs }, 'password grant failed; backing off');
    throw error;
  }

  #commit(pair: TokenPair, previousGeneration: number, counter: TokenCounter): Held {
    const { clock, bootClock, redactor } = this.#options;
    redactor?.remember(pair.accessToken);
    redactor?.remember(pair.refreshToken);
    const receivedAtMs = bootClock.nowMs();
    const generation = previousGeneration + 1;
    const stamp = { wallMs: clock.wallMs(), bootId: bootClock.bootId, bootMs: receivedAtMs };
    if (counter === 'auth.passwordGrants') this.#counts.passwordGrants += 1;
    else this.#counts.refreshes += 1;
    const held: Held = { pair, generation, receivedAtMs };
    this.#unsaved.commit(held, stamp, counter);
    return this.#adopt(held, counter === 'auth.refreshes' ? 'refreshed' : 'password grant');
  }

  #adopt(held: Held, how: string): Held {
    this.#held = held;
    this.#options.redactor?.remember(held.pair.accessToken);
    this.#options.redactor?.remember(held.pair.refreshToken);
    this.#options.logger.info({ generation: held.generation, expiresInS: held.pair.expiresInS, how }, 'access token ready');
    return held;
  }
}

function grant(h: Held): AccessGrant {
  return { token: h.pair.accessToken, generation: h.generation };
}
