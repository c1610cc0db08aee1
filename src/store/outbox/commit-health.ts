import type { Logger } from '../../log.js';
import { LogThrottle } from '../../log-throttle.js';
import type { Clock } from '../../system/clock.js';

export interface CommitError {
  code: string;
  message: string;
}

/** Whether the outbox commits are failing, since when, and with what (status, and the retry-after-failure rule). */
export class CommitHealth {
  readonly #clock: Clock;
  readonly #logger: Logger;
  #last: CommitError | undefined;
  #failingSince: number | undefined;
  /** The same failure again is logged at a decaying rate (167 lines in 3 minutes). */
  readonly #throttle = new LogThrottle();

  constructor(clock: Clock, logger: Logger) {
    this.#clock = clock;
    this.#logger = logger;
  }

  get lastError(): CommitError | undefined {
    return this.#last;
  }

  state(): { lastCommitError?: CommitError; commitFailingSinceMonoMs?: number } {
    return {
      ...(this.#last ? { lastCommitError: this.#last } : {}),
      ...(this.#failingSince !== undefined ? { commitFailingSinceMonoMs: this.#failingSince } : {}),
    };
  }

  succeeded(): void {
    if (this.#last && this.#throttle.repeats > 0)
      this.#logger.info({ code: this.#last.code, repeats: this.#throttle.repeats }, 'outbox commits succeed again');
    this.#last = undefined;
    this.#failingSince = undefined;
    this.#throttle.reset();
  }

  /**
   * A failed commit. A new failure is logged at once; the same one again (same code) after 1 min,
   * then 2, 4, ... up to once an hour, with how often it failed meanwhile.
   */
  failed(e: unknown, buffered: number): void {
    const err = errInfo(e);
    const now = this.#clock.monotonicMs();
    const same = this.#last?.code === err.code;
    this.#last = err;
    this.#failingSince ??= now;
    if (!same) this.#throttle.reset();
    if (!this.#throttle.occurred(now)) return;
    this.#logger.error(
      { err, buffered, ...(same ? { repeats: this.#throttle.repeats, failingForS: Math.round((now - this.#failingSince) / 1000) } : {}) },
      'outbox commit failed; fixes stay buffered and the commit is retried',
    );
  }

  /** The same failure again: keep the time it started, log nothing more. */
  stillFailing(): void {
    this.#failingSince ??= this.#clock.monotonicMs();
  }
}

export function errInfo(e: unknown): CommitError {
  const code = (e as { code?: unknown })?.code;
  return { code: typeof code === 'string' ? code : 'UNKNOWN', message: e instanceof Error ? e.message : String(e) };
}
