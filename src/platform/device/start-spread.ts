import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../log.js';
import type { Clock } from '../../system/clock.js';

/**
 * platform.startupJitterS: a fleet powered on together (the depot at 7:00, a
 * power cut) must not send its first password grants and device upserts in the same second. The
 * daemon draws one delay in [0, window) when it starts; the token manager's first renewal and the
 * registrar's first upsert wait until then. An agent whose stored token is valid and whose stored
 * registration matches its configuration renews and upserts nothing at start, so it waits for
 * nothing: the live lane sends the first fix at once. Built only by the daemon (src/agent.ts): a
 * command a person runs (`register`, `device show`) never waits.
 */
export class StartSpread {
  readonly #untilMs: number;
  readonly #delayMs: number;
  readonly #clock: Clock;
  readonly #logger: Logger;
  #announced = false;

  constructor(options: { windowS: number; clock: Clock; logger: Logger; random?: () => number }) {
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#delayMs = Math.floor((options.random ?? Math.random)() * options.windowS * 1000);
    this.#untilMs = options.clock.monotonicMs() + this.#delayMs;
  }

  /** The delay drawn for this start (ms). */
  get delayMs(): number {
    return this.#delayMs;
  }

  /** Resolves once the drawn moment has come (at once after it); rejects when `signal` aborts. */
  async wait(signal: AbortSignal, what: string): Promise<void> {
    const left = this.#untilMs - this.#clock.monotonicMs();
    if (left <= 0) return;
    if (!this.#announced) {
      this.#announced = true;
      this.#logger.info(
        { waitMs: Math.ceil(left), what },
        'first platform contact after start: waiting a random part of platform.startupJitterS so a fleet started together spreads out',
      );
    }
    await sleep(Math.ceil(left), undefined, { signal });
  }
}
