import type { Logger } from '../log.js';
import { ClockStepWatch } from '../system/clock-step.js';
import type { Clock, Timers } from '../system/clock.js';

/**
 * The uploader's backoff hold: nothing is sent before `at` (monotonic ms), and the pump is woken
 * then. While TLS refuses the platform's certificate by a wrong clock the hold also ends when the
 * clock is set (system/clock-step.ts): a backoff grown to minutes on the wrong clock held the first
 * delivery 89 s after it was set right.
 */
export class ResumeGate {
  readonly #timers: Timers;
  readonly #wake: () => void;
  readonly #watch: ClockStepWatch;
  #at = 0;
  #timer: unknown;

  constructor(o: { clock: Clock; timers: Timers; logger: Logger; wake: () => void; onClockSet: () => void }) {
    this.#timers = o.timers;
    this.#wake = o.wake;
    this.#watch = new ClockStepWatch({
      clock: o.clock,
      timers: o.timers,
      logger: o.logger,
      then: 'retrying the upload now',
      onStep: () => {
        this.#at = 0;
        o.onClockSet();
        this.wakeIn(0);
      },
    });
  }

  /** Monotonic ms the hold ends (0 or past: none). */
  get at(): number {
    return this.#at;
  }

  /** Holds until `untilMs` unless held longer already. */
  holdUntil(untilMs: number, nowMs: number): void {
    if (untilMs <= this.#at) return;
    this.#at = untilMs;
    this.wakeIn(untilMs - nowMs);
  }

  /** The upload failed on the clock (PLATFORM_TLS_CLOCK): end the hold when the clock is set. */
  watchClock(): void {
    this.#watch.arm();
  }

  /** Delivered: the clock is right (or was never the cause). */
  clockWorks(): void {
    this.#watch.disarm();
  }

  /** Wakes the pump in `delayMs` (one timer: a later call replaces it). */
  wakeIn(delayMs: number): void {
    if (this.#timer) this.#timers.clearTimeout(this.#timer);
    this.#timer = this.#timers.setTimeout(
      () => {
        this.#timer = undefined;
        this.#wake();
      },
      Math.max(1, Math.ceil(delayMs)),
    );
  }

  stop(): void {
    this.#watch.disarm();
    if (this.#timer) this.#timers.clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
