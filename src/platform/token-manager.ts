import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Secret } from '../config/secret.js';
import { AgentError, PlatformError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Database } from '../store/database.js';
import type { Clock } from '../system/clock.js';
import type { BootClock } from './boot-clock.js';
import type { TokenStatus } from './contracts.js';
import { TokenBackoff, type TokenBackoffTuning } from './token-backoff.js';
import { TokenClient } from './token-client.js';
import type { TokenPair } from './token-pair.js';
import { TokenStore, type LockHolder, type StoredToken } from './token-store.js';
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

type Reason = 'none' | 'due' | 'rejected';

/**
 * The token lifecycle of platform-spec.md sections 3 and 5:
 * - the password grant only when there is no usable refresh token or the refresh answers 401 (5.7);
 *   a rejected password backs off for minutes up to an hour, never loops;
 * - a refresh shortly before the lifetime, measured on the boot clock from receipt, runs out, and
 *   after any 401 of a service (5.5, 5.6);
 * - rotation is crash-safe: 'sending' is committed before a refresh token goes out, the new pair is
 *   committed before it is used, and a refresh token whose fate is unknown is never sent again;
 * - single flight: one renewal at a time in this process (a shared promise) and across processes
 *   (a lock row in the database, the stored pair re-read under it).
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

  constructor(options: TokenManagerOptions) {
    this.#o = options;
    this.#store = new TokenStore(options.db);
    this.#client = new TokenClient({ http: options.http, authUrl: options.authUrl, wallMs: () => options.clock.wallMs() });
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
  }

  /** A valid access token: the one held, or a renewed one when none is held or it is due. */
  async accessToken(signal?: AbortSignal): Promise<AccessGrant> {
    const held = this.#held;
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
      this.#backoff.check(this.#o.clock.monotonicMs());
      const stored = await this.#lock();
      try {
        const held = await this.#renewLocked(reason, generation, stored);
        this.#backoff.succeeded();
        this.#lastError = undefined;
        return held;
      } finally {
        this.#store.unlock(this.#owner);
      }
    } catch (e) {
      if (e instanceof AgentError) this.#lastError = { code: e.code, message: e.message };
      throw e;
    }
  }

  async #renewLocked(reason: Reason, generation: number, stored: StoredToken | undefined): Promise<Held> {
    if (stored && stored.refreshState === 'usable' && stored.generation > generation) {
      // Another process (or an earlier renewal) already rotated: use its pair, do not refresh again.
      const candidate = this.#heldFrom(stored);
      if (!this.#isDue(candidate)) return this.#adopt(candidate, reason === 'none' ? 'stored pair' : 'pair rotated by another process');
    }
    if (stored && stored.refreshState === 'usable') {
      const refreshed = await this.#refresh(stored);
      if (refreshed) return refreshed;
    } else if (stored && stored.refreshState === 'sending') {
      this.#o.logger.warn(
        { generation: stored.generation },
        'a token refresh was interrupted (process killed?): its refresh token may already be spent and is never sent again; using the password grant',
      );
    }
    return this.#passwordGrant(stored?.generation ?? 0);
  }

  async #refresh(stored: StoredToken): Promise<Held | undefined> {
    const { clock, logger } = this.#o;
    // Committed (synchronous=FULL) before the refresh token goes out: if we die before the answer
    // is committed, the next process knows this refresh token may be spent (spec 5.6).
    this.#store.setRefreshState(stored.generation, 'sending');
    const outcome = await this.#client.refresh(stored.pair.refreshToken, this.#stopping.signal);
    if (outcome.kind === 'pair') return this.#commit(outcome.pair, stored.generation, 'auth.refreshes');
    if (outcome.kind === 'rejected') {
      this.#store.setRefreshState(stored.generation, 'spent');
      logger.info(
        { generation: stored.generation, platformMessage: outcome.error.details?.platformMessage },
        'refresh token rejected (expired): using the password grant (spec 3, 5.7)',
      );
      return undefined;
    }
    // No answer, or an answer of something other than the token service's success: when the
    // server may have rotated the pair, the old refresh token must never be sent again.
    const spent = outcome.mayHaveArrived && outcome.error.status === undefined;
    this.#store.setRefreshState(stored.generation, spent ? 'spent' : 'usable');
    logger.warn({ err: outcome.error.toJSON(), refreshTokenSpent: spent }, 'token refresh failed; backing off');
    throw this.#backoff.serviceFailed(clock.monotonicMs(), clock.wallMs(), outcome.error);
  }

  async #passwordGrant(previousGeneration: number): Promise<Held> {
    const { clock, logger, credentials } = this.#o;
    const outcome = await this.#client.password(credentials.username, credentials.password, this.#stopping.signal);
    if (outcome.kind === 'pair') return this.#commit(outcome.pair, previousGeneration, 'auth.passwordGrants');
    if (outcome.kind === 'rejected') {
      const error = this.#backoff.credentialsRejected(
        clock.monotonicMs(),
        clock.wallMs(),
        String(outcome.error.details?.platformMessage ?? ''),
      );
      logger.error(
        { username: credentials.username, platformMessage: outcome.error.details?.platformMessage, retryInMs: error.retryAfterMs },
        'credentials rejected by the token service: fix credentials.username / the password; the password grant is retried only after a backoff',
      );
      throw error;
    }
    logger.warn({ err: outcome.error.toJSON() }, 'password grant failed; backing off');
    throw this.#backoff.serviceFailed(clock.monotonicMs(), clock.wallMs(), outcome.error);
  }

  #commit(pair: TokenPair, previousGeneration: number, counter: 'auth.passwordGrants' | 'auth.refreshes'): Held {
    const { clock, bootClock } = this.#o;
    const receivedAtMs = bootClock.nowMs();
    const generation = this.#store.commit(
      pair,
      previousGeneration,
      { wallMs: clock.wallMs(), bootId: bootClock.bootId, bootMs: receivedAtMs },
      counter,
    );
    if (counter === 'auth.passwordGrants') this.#counts.passwordGrants += 1;
    else this.#counts.refreshes += 1;
    return this.#adopt({ pair, generation, receivedAtMs }, counter === 'auth.refreshes' ? 'refreshed' : 'password grant');
  }

  #adopt(held: Held, how: string): Held {
    this.#held = held;
    this.#o.logger.info({ generation: held.generation, expiresInS: held.pair.expiresInS, how }, 'access token ready');
    return held;
  }

  #heldFrom(stored: StoredToken): Held {
    const sameBoot =
      stored.bootId === this.#o.bootClock.bootId && stored.bootMs !== undefined && stored.bootMs <= this.#o.bootClock.nowMs();
    return { pair: stored.pair, generation: stored.generation, receivedAtMs: sameBoot ? stored.bootMs : undefined };
  }

  /** Takes the cross-process token lock, waiting for another holder; returns the pair read under it. */
  async #lock(): Promise<StoredToken | undefined> {
    const { clock, tuning } = this.#o;
    const pollMs = 25;
    let announced = false;
    for (let waited = 0; ; waited += pollMs) {
      const r = this.#store.tryLock(this.#owner, clock.wallMs(), (h) => this.#isStale(h));
      if (r.acquired) return r.stored;
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

  #isStale(holder: LockHolder): boolean {
    const age = this.#o.clock.wallMs() - holder.acquiredAt;
    // A wall clock that stepped (NTP at boot) must not keep a lock for ever: either direction counts.
    if (age > this.#o.tuning.lockStaleMs || age < -60_000) return true;
    return !processAlive(holder.pid);
  }
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
