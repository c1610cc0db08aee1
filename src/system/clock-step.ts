import type { Logger } from '../log.js';
import type { Clock, Timers } from './clock.js';
import { CLOCK_AGREES_MS } from './clock-offset.js';

/** A wall clock that moved further than clock-vs-GNSS agreement against the monotonic one was set. */
const CLOCK_STEP_MS = CLOCK_AGREES_MS;
/** How often an armed watch looks: a second after the clock is set, the retry goes. */
const CHECK_MS = 1000;

/**
 * Tells when the system clock is set, while armed: TLS judged the platform's certificate by a wrong
 * clock, and the backoff that grew meanwhile (to minutes) must not outlast the fix. A step of the
 * wall clock against the monotonic one is the news (NTP, chrony's makestep, an RTC read, a hand set
 * date); one that comes right by slewing is met by the next retry as before. The uploader, the token
 * manager and the registrar each arm their own.
 */
export class ClockStepWatch {
  readonly #clock: Clock;
  readonly #timers: Timers;
  readonly #onStep: (stepMs: number) => void;
  readonly #said: { logger: Logger; then: string };
  #armedAt: number | undefined;
  #timer: unknown;

  /** `then`: what the owner does now, for the one log line a step gets ("retrying the upload now"). */
  constructor(options: { clock: Clock; timers: Timers; logger: Logger; then: string; onStep: (stepMs: number) => void }) {
    this.#clock = options.clock;
    this.#timers = options.timers;
    this.#onStep = options.onStep;
    this.#said = { logger: options.logger, then: options.then };
  }

  /** Watches from now (the clock as it reads now is the wrong one); arming again keeps the first reading. */
  arm(): void {
    this.#armedAt ??= this.#offset();
    this.#schedule();
  }

  disarm(): void {
    this.#armedAt = undefined;
    if (this.#timer) this.#timers.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #offset(): number {
    return this.#clock.wallMs() - this.#clock.monotonicMs();
  }

  /**
   * Looks now as well as every second: true, and onStep told, when the clock was set since arming.
   * A component whose callers come at their own time (the token manager) looks when one comes.
   */
  poll(): boolean {
    if (this.#armedAt === undefined) return false;
    const step = this.#offset() - this.#armedAt;
    if (Math.abs(step) <= CLOCK_STEP_MS) return false;
    this.disarm();
    this.#said.logger.info({ stepS: Math.round(step / 1000) }, `the system clock was set: ${this.#said.then} instead of after its backoff`);
    this.#onStep(step);
    return true;
  }

  #schedule(): void {
    if (this.#timer) return;
    this.#timer = this.#timers.setTimeout(() => {
      this.#timer = undefined;
      if (this.#armedAt !== undefined && !this.poll()) this.#schedule();
    }, CHECK_MS);
  }
}
