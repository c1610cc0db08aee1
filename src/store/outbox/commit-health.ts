import type { Logger } from '../../log.js';
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
    this.#last = undefined;
    this.#failingSince = undefined;
  }

  failed(e: unknown, buffered: number): void {
    this.#last = errInfo(e);
    this.#failingSince ??= this.#clock.monotonicMs();
    this.#logger.error({ err: this.#last, buffered }, 'outbox commit failed; fixes stay buffered and the commit is retried');
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
