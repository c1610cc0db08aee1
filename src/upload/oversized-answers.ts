import type { Logger } from '../log.js';
import { LogThrottle } from '../log-throttle.js';
import type { PlatformResponse } from '../platform/contracts.js';
import type { Clock } from '../system/clock.js';

/**
 * Accepted events whose answer was larger than platform.maxResponseBytes. Each is
 * delivered (a 2xx is the platform's word) and its answer was cut off unread; the log says so
 * once, then after 1, 2, 4 ... minutes up to hourly (log-throttle.ts) with the count so far, so a
 * platform that echoes huge answers to every event does not fill the journal as fast as it takes
 * events.
 */
export class OversizedAnswers {
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #throttle = new LogThrottle();
  #count = 0;

  constructor(logger: Logger, clock: Clock) {
    this.#logger = logger;
    this.#clock = clock;
  }

  get count(): number {
    return this.#count;
  }

  note(status: number, o: NonNullable<PlatformResponse['oversized']>): void {
    this.#count++;
    if (!this.#throttle.occurred(this.#clock.monotonicMs())) return;
    this.#logger.warn(
      {
        status,
        limitBytes: o.limitBytes,
        ...(o.declaredBytes !== undefined ? { declaredBytes: o.declaredBytes } : {}),
        count: this.#count,
      },
      `the platform accepted an event with an answer larger than platform.maxResponseBytes (${o.limitBytes} bytes): counted as delivered, the rest of the answer not downloaded`,
    );
  }
}
