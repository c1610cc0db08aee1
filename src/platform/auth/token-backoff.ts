import { AgentError, PlatformError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { atLeastRetryAfter, backoffMs } from '../../retry/backoff.js';
import type { Clock, Timers } from '../../system/clock.js';
import { ClockStepWatch } from '../../system/clock-step.js';

/**
 * The two waits of the token manager, on the monotonic clock:
 * - credentials rejected (platform contract, Tokens: never loop on the password grant): minutes, doubling to an hour;
 * - token service failing (5xx, 429, network): seconds, doubling to a few minutes, at least Retry-After.
 * While a wait runs, callers get the error at once and the token service hears nothing. A service
 * wait that TLS refusing the certificate by a wrong clock grew ends when the clock is set.
 */

/**
 * Credentials rejected: 2 min doubling to an hour. The contract forbids a password loop (an account
 * can be locked); a password corrected in place ends the wait within seconds (password-watch.ts), so
 * the person who fixed it does not wait out the step.
 */
export const PASSWORD_RETRY_MIN_S = 120;
export const PASSWORD_RETRY_MAX_S = 3600;

/**
 * Token service failing: 2 s doubling to 5 min, never below Retry-After. Several steps fit in the
 * refresh margin (TOKEN_REFRESH_MARGIN_S, 120 s). bench:fleet (1,000 agents, a 5-minute token-service
 * outage as the hour-long tokens came due): no password grant after the first, one refresh per token.
 */
export const TOKEN_SERVICE_RETRY_MIN_S = 2;
export const TOKEN_SERVICE_RETRY_MAX_S = 300;

export interface TokenBackoffTuning {
  passwordRetryMinS: number;
  passwordRetryMaxS: number;
  serviceRetryMinS: number;
  serviceRetryMaxS: number;
}

interface Wait {
  failures: number;
  untilMs: number;
  retryAtWallMs: number;
  error: AgentError;
}

export class TokenBackoff {
  readonly #t: TokenBackoffTuning;
  readonly #random: () => number;
  readonly #clockStep: ClockStepWatch;
  #rejected: Wait | undefined;
  #service: Wait | undefined;

  constructor(tuning: TokenBackoffTuning, random: () => number, clockSet: { clock: Clock; timers: Timers; logger: Logger }) {
    this.#t = tuning;
    this.#random = random;
    this.#clockStep = new ClockStepWatch({
      clock: clockSet.clock,
      timers: clockSet.timers,
      logger: clockSet.logger,
      then: 'the token service is asked at the next request',
      onStep: () => {
        // The failures were the clock's: the next one is a first again.
        this.#service = undefined;
      },
    });
  }

  /** Throws the pending error while a wait runs. */
  check(nowMs: number): void {
    // Looked at here too: a caller the clock step woke (the registrar) must not meet the old wait.
    this.#clockStep.poll();
    for (const w of [this.#rejected, this.#service]) {
      if (w && nowMs < w.untilMs) {
        const e = w.error;
        throw new PlatformError(e.code, e.message, {
          class: e.errorClass,
          retryable: e.retryable,
          retryAfterMs: Math.ceil(w.untilMs - nowMs),
          ...(e.details ? { details: e.details } : {}),
        });
      }
    }
  }

  rejectedUntilWall(nowMs: number): number | undefined {
    return this.#rejected && nowMs < this.#rejected.untilMs ? this.#rejected.retryAtWallMs : undefined;
  }

  /**
   * A rejected password: returns the error to throw (class config, with retryAfterMs). `fix` says
   * what to fix, given the wall time of the next attempt (password-source.ts).
   */
  credentialsRejected(nowMs: number, wallMs: number, platformMessage: string, fix?: (retryAtWallMs: number) => string): PlatformError {
    const failures = (this.#rejected?.failures ?? 0) + 1;
    const delayMs = this.#delay(failures, this.#t.passwordRetryMinS, this.#t.passwordRetryMaxS, undefined);
    const hint = fix ? fix(wallMs + delayMs) : 'fix credentials.username and the password';
    const error = new PlatformError(
      'CREDENTIALS_REJECTED',
      `credentials rejected by the token service (${platformMessage || 'invalid_grant'}); ${hint}; next attempt in ${Math.round(delayMs / 1000)} s`,
      {
        class: 'config',
        retryable: true,
        status: 401,
        retryAfterMs: delayMs,
        details: { platformMessage, attempts: failures },
      },
    );
    this.#rejected = { failures, untilMs: nowMs + delayMs, retryAtWallMs: wallMs + delayMs, error };
    return error;
  }

  /** The rejected password was replaced (a password file fixed in place): the next attempt may go now. */
  clearRejected(): void {
    if (this.#rejected) this.#rejected = { ...this.#rejected, untilMs: 0 };
  }

  /** The token service failed transiently: returns the error to throw, with retryAfterMs. */
  serviceFailed(nowMs: number, wallMs: number, cause: PlatformError): PlatformError {
    const failures = (this.#service?.failures ?? 0) + 1;
    const delayMs = this.#delay(failures, this.#t.serviceRetryMinS, this.#t.serviceRetryMaxS, cause.retryAfterMs);
    const error = new PlatformError(cause.code, cause.message, {
      class: cause.errorClass === 'config' ? 'config' : 'transient',
      retryable: true,
      retryAfterMs: delayMs,
      cause,
      ...(cause.status !== undefined ? { status: cause.status } : {}),
      ...(cause.details ? { details: cause.details } : {}),
    });
    this.#service = { failures, untilMs: nowMs + delayMs, retryAtWallMs: wallMs + delayMs, error };
    if (cause.code === 'PLATFORM_TLS_CLOCK') this.#clockStep.arm();
    else this.#clockStep.disarm();
    return error;
  }

  succeeded(): void {
    this.#rejected = undefined;
    this.#service = undefined;
    this.#clockStep.disarm();
  }

  stop(): void {
    this.#clockStep.disarm();
  }

  /** retry/backoff.ts with equal jitter; never below Retry-After, spread above it. */
  #delay(failures: number, minS: number, maxS: number, retryAfterMs: number | undefined): number {
    const random = this.#random();
    return atLeastRetryAfter(backoffMs(failures, { minMs: minS * 1000, maxMs: maxS * 1000 }, random), retryAfterMs, Infinity, random);
  }
}
