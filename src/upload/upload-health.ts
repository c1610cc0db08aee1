import type { ErrorClass, PlatformError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Clock, Timers } from '../system/clock.js';
import { ResumeGate } from './resume-gate.js';
import { uploadError, type UploadError, type UploaderStatus } from './upload-types.js';

/**
 * Whether the uploads are failing: the failures in a row that size the backoff, the hold they set
 * (resume-gate.ts), and the last success and error status shows. The uploader tells it each outcome.
 */
export class UploadHealth {
  readonly #clock: Clock;
  #failures = 0;
  /** The last attempt's stream was refused unprocessed: probe one at a time, without growing the backoff. */
  #streamsRefused = false;
  #lastFailureAt = -Infinity;
  /** The backoff's hold, which a clock set right ends at once. */
  readonly #resume: ResumeGate;
  #lastSuccessAt: number | undefined;
  /** Monotonic stamps beside the wall ones: status measures ages on them, immune to clock steps. */
  #lastSuccessMono: number | undefined;
  #lastErrorMono = 0;
  #lastError: UploadError | undefined;

  /** `wake`: the uploader's pump, woken when the hold ends. */
  constructor(o: { clock: Clock; timers: Timers; logger: Logger; wake: () => void }) {
    this.#clock = o.clock;
    this.#resume = new ResumeGate({
      clock: o.clock,
      timers: o.timers,
      logger: o.logger,
      wake: o.wake,
      // The failures were the clock's: the next one is a first again (still one probe at a time).
      onClockSet: () => (this.#failures = Math.min(this.#failures, 1)),
    });
  }

  /** Failures in a row. */
  get failures(): number {
    return this.#failures;
  }

  get streamsRefused(): boolean {
    return this.#streamsRefused;
  }

  /** Monotonic ms the backoff's hold ends (0 or past: none). */
  get resumeAt(): number {
    return this.#resume.at;
  }

  get lastError(): UploadError | undefined {
    return this.#lastError;
  }

  /** Wakes the pump in `delayMs` (resume-gate.ts). */
  wakeIn(delayMs: number): void {
    this.#resume.wakeIn(delayMs);
  }

  stop(): void {
    this.#resume.stop();
  }

  /** Whether a request started at `startedAt` went out after the last failure, not before it in the same outage. */
  startedAfterFailure(startedAt: number): boolean {
    return startedAt >= this.#lastFailureAt;
  }

  /** The failures in a row with one more of a request started at `startedAt`. */
  failuresWith(startedAt: number): number {
    // Failures of requests started before the last failure belong to the same outage: one step.
    return startedAt >= this.#lastFailureAt ? this.#failures + 1 : Math.max(1, this.#failures);
  }

  /** Delivered: no failures, no hold, the clock works. */
  succeeded(): void {
    this.#failures = 0;
    this.#streamsRefused = false;
    this.#resume.clockWorks();
    this.#lastSuccessAt = this.#clock.wallMs();
    this.#lastSuccessMono = this.#clock.monotonicMs();
  }

  /**
   * A retryable failure (retry-decision.ts): `failures` as failuresWith gave it, the backoff
   * `delayMs`, `holdBackoff` for a refused stream; `clockError`: TLS refused on the clock.
   */
  retrying(o: { failures: number; startedAt: number; delayMs: number; holdBackoff: boolean; clockError: boolean }): void {
    if (o.startedAt >= this.#lastFailureAt && !o.holdBackoff) this.#failures = o.failures;
    this.#streamsRefused = o.holdBackoff;
    this.#lastFailureAt = this.#clock.monotonicMs();
    this.#resume.holdUntil(this.#lastFailureAt + o.delayMs, this.#lastFailureAt);
    if (o.clockError) this.#resume.watchClock();
  }

  /** The platform refuses every event (rejection-rule.ts): one probe after `waitMs`, until it accepts one again. */
  refusedAll(waitMs: number): void {
    this.#failures = Math.max(1, this.#failures + 1);
    this.#lastFailureAt = this.#clock.monotonicMs();
    this.#resume.holdUntil(this.#lastFailureAt + waitMs, this.#lastFailureAt);
  }

  /** `cls`: the class the decision gave the answer (the status table's), else the error's own. */
  note(error: PlatformError | undefined, cls?: ErrorClass): void {
    if (!error) return;
    this.#lastError = uploadError(error, cls ?? error.errorClass, this.#clock.wallMs());
    this.#lastErrorMono = this.#clock.monotonicMs();
  }

  /** Its part of the uploader's status at `now` (monotonic ms). */
  status(now: number): Pick<UploaderStatus, 'consecutiveFailures' | 'backoffUntil' | 'lastSuccessAt' | 'lastSuccessAgeMs' | 'lastError'> {
    return {
      consecutiveFailures: this.#failures,
      ...(this.#resume.at > now ? { backoffUntil: this.#clock.wallMs() + (this.#resume.at - now) } : {}),
      ...(this.#lastSuccessAt !== undefined ? { lastSuccessAt: this.#lastSuccessAt } : {}),
      ...(this.#lastSuccessMono !== undefined ? { lastSuccessAgeMs: now - this.#lastSuccessMono } : {}),
      ...(this.#lastError ? { lastError: { ...this.#lastError, ageMs: now - this.#lastErrorMono } } : {}),
    };
  }
}
