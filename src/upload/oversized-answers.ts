import type { Logger } from '../log.js';
import type { PlatformResponse } from '../platform/contracts.js';

/**
 * Accepted events whose answer was larger than platform.maxResponseBytes (issue 22.5). Each is
 * delivered (a 2xx is the platform's word) and its answer was cut off unread; the log says so
 * once, then every 1,000th time, so a platform that echoes huge answers to every event does not
 * fill the journal as fast as it takes events.
 */
export class OversizedAnswers {
  readonly #logger: Logger;
  #count = 0;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  get count(): number {
    return this.#count;
  }

  note(status: number, o: NonNullable<PlatformResponse['oversized']>): void {
    this.#count++;
    if (this.#count !== 1 && this.#count % 1000 !== 0) return;
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
