import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { passwordFixHint } from '../config/password-source.js';
import type { Secret } from '../config/secret.js';
import { AgentError, PlatformError, errorFields } from '../errors.js';
import type { Logger } from '../log.js';
import type { Database } from '../store/database.js';
import { isCorrupt } from '../store/store-faults.js';
import type { Clock } from '../system/clock.js';
import type { BootClock } from './boot-clock.js';
import type { TokenStatus } from './contracts.js';
import { TokenBackoff, type TokenBackoffTuning } from './token-backoff.js';
import { TokenClient } from './token-client.js';
import type { SecretRedactor } from './secret-redactor.js';
import { checkStoredPair, type TokenPair } from './token-pair.js';
import { TokenStore, type LockHolder, type StoredToken, type TokenCounter } from '../store/token-store.js';
import type { PlatformHttp } from './http.js';

export interface TokenManagerTuning extends TokenBackoffTuning {
  /** Refresh this long before the recorded lifetime runs out (at most a tenth of the lifetime). */
  refreshMarginS: number;
  /** Give up waiting for another process's token lock after this long. */
  lockWaitMs: number;
  /** A lock older than this is abandoned, even if its process still runs. */
  lockStaleMs: number;
  /** How often start() checks whether the token is due for a refresh. */
  maintainIntervalMs: number;
}

export interface TokenManagerOptions {
  db: Database;
  http: PlatformHttp;
  /** platform.authUrl (ends in /api/v1). */
  authUrl: string;
  credentials: { username: string; password: Secret };
  /** Wall time for the lock and status; monotonic time for backoffs. */
  clock: Clock;
  /** Token ages (boot-clock.ts). */
  bootClock: BootClock;
  logger: Logger;
  tuning: TokenManagerTuning;
  random?: () => number;
  /** Told every token held and every password sent, so that an echo of one in an answer is redacted. */
  redactor?: SecretRedactor;
}

/** An access token to send, and the generation it belongs to (for renewAfterUnauthorized). */
export interface AccessGrant {
  token: string;
  generation: number;
}

interface Held {
  pair: TokenPair;
  generation: number;
  /** Receipt on the boot clock; undefined when unknown (stored before the last reboot). */
  receivedAtMs: number | undefined;
}

/** A pair received while the database could not be written (issue 11.2): used from memory, stored later. */
interface Unsaved {
  held: Held;
  stamp: { wallMs: number; bootId: string; bootMs: number };
  counts: Partial<Record<TokenCounter, number>>;
  /** Monotonic time of the last attempt to store it. */
  triedAtMs: number;
}

/** How often a pair kept in memory is offered to the database again. */
const UNSAVED_RETRY_MS = 5_000;
/** While credentials are rejected, how often the password source is read to see whether it was fixed. */
const PASSWORD_CHANGE_CHECK_MS = 5_000;

type Reason = 'none' | 'due' | 'rejected';

/**
 * The token lifecycle of platform-spec.md sections 3 and 5:
 * - the password grant only when there is no refresh token or the refresh itself answered 401
 *   (5.7); a rejected password backs off for minutes up to an hour, never loops, and a password
 *   file fixed in place is read again (and tried at once when it changed);
 * - a refresh shortly before the lifetime, measured on the boot clock from receipt, runs out, and
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
  readonly #o: TokenManagerOptions;
  readonly #store: TokenStore;
  readonly #client: TokenClient;
  readonly #backoff: TokenBackoff;
  readonly #owner = `${process.pid}:${randomUUID()}`;
  readonly #stopping = new AbortController();
  #held: Held | undefined;
  #inflight: Promise<Held> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #lastError: { code: string; message: string } | undefined;
  readonly #counts = { passwordGrants: 0, refreshes: 0 };
  #unsaved: Unsaved | undefined;
  /** The generation whose refresh token the token service rejected, in case the database could not record it. */
  #spentGeneration: number | undefined;
  /** Fingerprint of the password the token service rejected, and when the source was last looked at. */
  #rejectedPassword: { fingerprint: string; checkedAtMs: number } | undefined;

  constructor(options: TokenManagerOptions) {
    this.#o = options;
    this.#store = new TokenStore(options.db);
    this.#client = new TokenClient({
      http: options.http,
      authUrl: options.authUrl,
      wallMs: () => options.clock.wallMs(),
      ...(options.redactor ? { redactor: options.redactor } : {}),
    });
    this.#backoff = new TokenBackoff(options.tuning, options.random ?? Math.random);
  }

  /** Keeps the token fresh in the background, so an idle agent does not let its session lapse. */
  async start(): Promise<void> {
    this.#timer = setInterval(() => void this.maintain(), this.#o.tuning.maintainIntervalMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#stopping.abort();
    await this.#inflight?.catch(() => undefined);
    this.#storeUnsaved(true);
  }

  /** A valid access token: the one held, or a renewed one when none is held or it is due. */
  async accessToken(signal?: AbortSignal): Promise<AccessGrant> {
    const held = this.#held;
    if (this.#unsaved) this.#storeUnsaved(false);
    if (held && !this.#isDue(held)) return grant(held);
    return grant(await this.#renew(held ? 'due' : 'none', held?.generation ?? 0, signal));
  }

  /** A service answered 401 to the token of `generation`: a newer token (one refresh, shared). */
  async renewAfterUnauthorized(generation: number, signal?: AbortSignal): Promise<AccessGrant> {
    const held = this.#held;
    if (held && held.generation > generation) return grant(held);
    return grant(await this.#renew('rejected', generation, signal));
  }

  /** Renews when the held token is due; failures are logged and left for the next request. */
  async maintain(): Promise<void> {
    if (this.#unsaved) this.#storeUnsaved(false);
    const held = this.#held;
    if (!held || !this.#isDue(held) || this.#inflight) return;
    await this.#renew('due', held.generation).catch(() => undefined);
  }

  tokenStatus(): TokenStatus {
    const nowMono = this.#o.clock.monotonicMs();
    const retryAt = this.#backoff.rejectedUntilWall(nowMono);
    const held = this.#held;
    const ageMs = held?.receivedAtMs !== undefined ? Math.max(0, this.#o.bootClock.nowMs() - held.receivedAtMs) : undefined;
    let state: TokenStatus['state'] = 'none';
    if (retryAt !== undefined) state = 'rejected';
    else if (this.#inflight) state = 'refreshing';
    else if (held) state = ageMs !== undefined && ageMs < held.pair.expiresInS * 1000 ? 'valid' : 'expired';
    return {
      state,
      ...(ageMs !== undefined ? { ageMs } : {}),
      ...(retryAt !== undefined ? { retryAt } : {}),
      ...(this.#lastError ? { lastError: this.#lastError } : {}),
      ...this.#counts,
    };
  }

  #isDue(h: Held): boolean {
    if (h.receivedAtMs === undefined) return true;
    const lifeMs = h.pair.expiresInS * 1000;
    const marginMs = Math.min(this.#o.tuning.refreshMarginS * 1000, lifeMs / 10);
    return this.#o.bootClock.nowMs() - h.receivedAtMs >= lifeMs - marginMs;
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
      this.#passwordChanged();
      this.#backoff.check(this.#o.clock.monotonicMs());
      const lock = await this.#lock();
      try {
        const held = await this.#renewLocked(reason, generation, lock.stored);
        this.#backoff.succeeded();
        this.#lastError = undefined;
        this.#rejectedPassword = undefined;
        return held;
      } finally {
        if (lock.shared) this.#storeWrite('token unlock', () => this.#store.unlock(this.#owner));
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
      const candidate = this.#heldFrom(current);
      if (!this.#isDue(candidate)) return this.#adopt(candidate, reason === 'none' ? 'stored pair' : 'pair rotated by another process');
    }
    if (current && current.refreshState !== 'spent') {
      if (current.refreshState === 'sending') {
        this.#o.logger.warn(
          { generation: current.generation },
          'a token refresh was interrupted (process killed?): retrying it with the same refresh token, which is discarded only when a new one arrives (spec 5.6)',
        );
      }
      const refreshed = await this.#refresh(current);
      if (refreshed) return refreshed;
    }
    return this.#passwordGrant(current?.generation ?? stored?.generation ?? 0);
  }

  /**
   * The pair to renew from: the stored one, checked (issue 11.4: a malformed stored pair is
   * discarded, never sent), or the one held in memory when it is newer (it could not be stored).
   */
  #current(stored: StoredToken | undefined): StoredToken | undefined {
    const unsaved = this.#unsaved?.held;
    if (unsaved && unsaved.generation > (stored?.generation ?? 0)) {
      return {
        pair: unsaved.pair,
        generation: unsaved.generation,
        obtainedAtWallMs: this.#unsaved?.stamp.wallMs ?? 0,
        bootId: this.#o.bootClock.bootId,
        bootMs: unsaved.receivedAtMs,
        refreshState: this.#spentGeneration === unsaved.generation ? 'spent' : 'usable',
      };
    }
    if (!stored) return undefined;
    const checked = checkStoredPair(stored.pair);
    if (!checked.ok) {
      const empty = stored.pair.accessToken === '' && stored.pair.refreshToken === '';
      if (!empty) {
        this.#o.logger.warn(
          { generation: stored.generation, code: 'TOKEN_PAIR_MALFORMED', problem: checked.problem },
          'the stored token pair is malformed and is discarded; a new pair is requested',
        );
        this.#storeWrite('discard malformed token pair', () => this.#store.discard(stored.generation));
      }
      return undefined;
    }
    const spent = this.#spentGeneration === stored.generation;
    for (const t of [checked.pair.accessToken, checked.pair.refreshToken]) this.#o.redactor?.remember(t);
    return { ...stored, pair: checked.pair, refreshState: spent ? 'spent' : stored.refreshState };
  }

  async #refresh(current: StoredToken): Promise<Held | undefined> {
    const { clock, logger } = this.#o;
    // Recorded before the refresh token goes out, so that a process killed before the answer is
    // committed tells the next one (which then retries with the same token and logs it). Best
    // effort: on a full disk the refresh goes ahead without the note.
    this.#storeWrite('refresh state', () => this.#store.setRefreshState(current.generation, 'sending'));
    const outcome = await this.#client.refresh(current.pair.refreshToken, this.#stopping.signal);
    if (outcome.kind === 'pair') return this.#commit(outcome.pair, current.generation, 'auth.refreshes');
    if (outcome.kind === 'rejected') {
      // Spec 3, last row and 5.7: only now is the password grant allowed again.
      this.#spentGeneration = current.generation;
      this.#storeWrite('refresh state', () => this.#store.setRefreshState(current.generation, 'spent'));
      logger.info(
        { generation: current.generation, platformMessage: outcome.error.details?.platformMessage },
        'refresh token rejected (expired): using the password grant (spec 3, 5.7)',
      );
      return undefined;
    }
    // No answer (the request may or may not have been acted on), a 5xx, a malformed pair: the
    // refresh token is kept and sent again after the backoff. Had the server rotated it, the retry
    // answers 401, which is what allows the password grant (spec 5.6, 5.7).
    this.#storeWrite('refresh state', () => this.#store.setRefreshState(current.generation, 'usable'));
    const error = this.#backoff.serviceFailed(clock.monotonicMs(), clock.wallMs(), outcome.error);
    logger.warn(
      { err: errorFields(outcome.error), mayHaveArrived: outcome.mayHaveArrived, retryInMs: error.retryAfterMs },
      'token refresh failed; retrying with the same refresh token after the backoff',
    );
    throw error;
  }

  async #passwordGrant(previousGeneration: number): Promise<Held> {
    const { clock, logger, credentials } = this.#o;
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
      this.#rememberRejectedPassword(nowMs);
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

  /**
   * Notes which password was rejected (a hash, never the value), so that a password file fixed in
   * place is tried at once instead of after the rejection backoff (up to an hour).
   */
  #rememberRejectedPassword(nowMs: number): void {
    const fingerprint = this.#passwordFingerprint();
    this.#rejectedPassword = fingerprint === undefined ? undefined : { fingerprint, checkedAtMs: nowMs };
  }

  /** While credentials are rejected: has the password source changed since? Then the wait ends now. */
  #passwordChanged(): void {
    const r = this.#rejectedPassword;
    const nowMs = this.#o.clock.monotonicMs();
    if (!r || !this.#o.credentials.password.rereads || nowMs - r.checkedAtMs < PASSWORD_CHANGE_CHECK_MS) return;
    r.checkedAtMs = nowMs;
    const fingerprint = this.#passwordFingerprint();
    if (fingerprint === undefined || fingerprint === r.fingerprint) return;
    this.#rejectedPassword = undefined;
    if (this.#backoff.rejectedUntilWall(nowMs) === undefined) return;
    this.#backoff.clearRejected();
    this.#o.logger.info({ source: this.#o.credentials.password.origin }, 'the password changed since it was rejected: trying it now');
  }

  #passwordFingerprint(): string | undefined {
    try {
      return createHash('sha256').update(this.#o.credentials.password.reveal()).digest('base64');
    } catch {
      return undefined;
    }
  }

  #commit(pair: TokenPair, previousGeneration: number, counter: TokenCounter): Held {
    const { clock, bootClock, redactor } = this.#o;
    redactor?.remember(pair.accessToken);
    redactor?.remember(pair.refreshToken);
    const receivedAtMs = bootClock.nowMs();
    const generation = previousGeneration + 1;
    const stamp = { wallMs: clock.wallMs(), bootId: bootClock.bootId, bootMs: receivedAtMs };
    if (counter === 'auth.passwordGrants') this.#counts.passwordGrants += 1;
    else this.#counts.refreshes += 1;
    const held: Held = { pair, generation, receivedAtMs };
    const counts = { ...(this.#unsaved?.counts ?? {}) };
    counts[counter] = (counts[counter] ?? 0) + 1;
    const unsaved: Unsaved = { held, stamp, counts, triedAtMs: clock.monotonicMs() };
    try {
      this.#store.commit(pair, generation, stamp, counts);
      this.#unsaved = undefined;
    } catch (e) {
      // Issue 11.2: the pair is good and the old refresh token may already be spent on the server,
      // so the pair is used from memory and stored when writing works again (#storeUnsaved). What
      // a crash in this window costs: the database still holds the previous pair, whose refresh
      // token the server has rotated away; the next process refreshes with it, gets 401, and makes
      // one password grant, which spec 5.7 allows after exactly that 401. Nothing else is lost.
      this.#unsaved = unsaved;
      this.#o.logger.warn(
        { generation, code: storeErrorCode(e) },
        'a new token pair could not be stored (disk full or database busy?): using it from memory, storing it when writing works again',
      );
    }
    return this.#adopt(held, counter === 'auth.refreshes' ? 'refreshed' : 'password grant');
  }

  /** Offers a pair kept in memory to the database again (on token use and on the maintenance timer). */
  #storeUnsaved(force: boolean): void {
    const u = this.#unsaved;
    if (!u) return;
    const nowMs = this.#o.clock.monotonicMs();
    if (!force && nowMs - u.triedAtMs < UNSAVED_RETRY_MS) return;
    u.triedAtMs = nowMs;
    try {
      const stored = this.#store.commit(u.held.pair, u.held.generation, u.stamp, u.counts);
      this.#unsaved = undefined;
      this.#o.logger.info(
        { generation: u.held.generation, stored },
        stored
          ? 'the token pair kept in memory is stored now'
          : 'another process stored a newer token pair meanwhile; keeping ours in memory only',
      );
    } catch {
      // Still not writable: tried again later.
    }
  }

  /** A write the token lifecycle can do without (a note, the lock row): a failure is logged, not thrown. */
  #storeWrite(what: string, write: () => void): boolean {
    try {
      write();
      return true;
    } catch (e) {
      this.#o.logger.warn({ code: storeErrorCode(e), what }, 'token bookkeeping could not be written to the database; going on without it');
      return false;
    }
  }

  #adopt(held: Held, how: string): Held {
    this.#held = held;
    this.#o.redactor?.remember(held.pair.accessToken);
    this.#o.redactor?.remember(held.pair.refreshToken);
    this.#o.logger.info({ generation: held.generation, expiresInS: held.pair.expiresInS, how }, 'access token ready');
    return held;
  }

  #heldFrom(stored: StoredToken): Held {
    const sameBoot =
      stored.bootId === this.#o.bootClock.bootId && stored.bootMs !== undefined && stored.bootMs <= this.#o.bootClock.nowMs();
    return { pair: stored.pair, generation: stored.generation, receivedAtMs: sameBoot ? stored.bootMs : undefined };
  }

  /**
   * Takes the cross-process token lock, waiting for another holder; returns the pair read under it.
   * When the lock row cannot be written (disk full, issue 11.2) the in-process single flight is the
   * only lock: delivery must not stop for it. Another process renewing at the same moment could then
   * send the same refresh token; the loser's 401 costs one password grant, no data.
   */
  async #lock(): Promise<{ stored: StoredToken | undefined; shared: boolean }> {
    const { clock, tuning } = this.#o;
    const pollMs = 25;
    let announced = false;
    for (let waited = 0; ; waited += pollMs) {
      let r: ReturnType<TokenStore['tryLock']>;
      try {
        r = this.#store.tryLock(this.#owner, clock.wallMs(), (h) => this.#isStale(h));
      } catch (e) {
        // A damaged file is being salvaged (agent.ts): a password grant now would be lost with this
        // token manager; the one after the salvage is the one that is justified (issue 11.3).
        if (isCorrupt(e)) throw e;
        this.#o.logger.warn(
          { code: storeErrorCode(e) },
          'the token lock cannot be written to the database (disk full?): renewing under the in-process lock only',
        );
        return { stored: this.#readStored(), shared: false };
      }
      if (r.acquired) return { stored: r.stored, shared: true };
      if (!announced) this.#o.logger.debug({ holderPid: r.holder?.pid }, 'another process is renewing the token: waiting for it');
      announced = true;
      if (waited >= tuning.lockWaitMs) {
        throw new PlatformError(
          'TOKEN_LOCK_BUSY',
          `another process (pid ${r.holder?.pid}) has been renewing the token for over ${tuning.lockWaitMs} ms`,
          { class: 'transient', retryAfterMs: 1000 },
        );
      }
      await sleep(pollMs, undefined, { signal: this.#stopping.signal });
    }
  }

  #readStored(): StoredToken | undefined {
    try {
      return this.#store.read();
    } catch (e) {
      this.#o.logger.warn({ code: storeErrorCode(e) }, 'the stored token pair cannot be read');
      return undefined;
    }
  }

  #isStale(holder: LockHolder): boolean {
    const age = this.#o.clock.wallMs() - holder.acquiredAt;
    // A wall clock that stepped (NTP at boot) must not keep a lock for ever: either direction counts.
    if (age > this.#o.tuning.lockStaleMs || age < -60_000) return true;
    return !processAlive(holder.pid);
  }
}

/**
 * The code of a store failure for the log: the store's own (STORE_DISK_FULL and friends, issue
 * 11.2) or SQLite's (SQLITE_FULL, SQLITE_BUSY, SQLITE_IOERR_*) or the system's (ENOSPC).
 */
function storeErrorCode(e: unknown): string {
  let cur: unknown = e;
  for (let i = 0; i < 4 && cur && typeof cur === 'object'; i++) {
    const { code, sqliteCode } = cur as { code?: unknown; sqliteCode?: unknown };
    if (typeof code === 'string') return typeof sqliteCode === 'string' && sqliteCode !== code ? `${code} (${sqliteCode})` : code;
    cur = (cur as { cause?: unknown }).cause;
  }
  return e instanceof Error ? e.message : String(e);
}

function grant(h: Held): AccessGrant {
  return { token: h.pair.accessToken, generation: h.generation };
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Waits for a shared promise, but lets one caller give up without cancelling it for the others. */
function abortable<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
