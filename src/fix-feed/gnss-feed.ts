import { createDecoder } from '../gnss/decoder.js';
import { systemClock } from '../system/clock.js';
import type { Fix } from '../fix/fix.js';
import { correctWeekRollover, type RolloverOptions } from '../gnss/rollover.js';
import type { NmeaSource } from '../gnss/sources/source.js';
import type { FixFeed } from './fix-feed.js';

/**
 * Fixes straight from a GNSS source (the serial port or a replay file), decoded by the GNSS
 * modules as the daemon decodes them, week rollover corrected. It deliberately skips the GNSS
 * pipeline's recording policy: that thins a standing vehicle to one fix every few minutes, and
 * `location here` wants every epoch. The quality gate is applied by the capture (capture.ts).
 */

/** A source that can tell when it has delivered everything (a replay file). */
type MaybeFinishing = NmeaSource & { finished?: () => Promise<void> };

export interface GnssFixFeedOptions {
  source: MaybeFinishing;
  /** For messages: "the receiver on /dev/ttyACM0", "the replay of /x.nmea". */
  description: string;
  maxLineLength?: number;
  rollover?: RolloverOptions;
}

export class GnssFixFeed implements FixFeed {
  readonly #o: GnssFixFeedOptions;

  constructor(options: GnssFixFeedOptions) {
    this.#o = options;
  }

  get description(): string {
    return this.#o.description;
  }

  /** The link's last error, for a capture that got nothing ("cannot open /dev/ttyACM0: ..."). */
  diagnose(): string | undefined {
    const link = this.#o.source.link();
    return link.lastError !== undefined
      ? `${link.path}: ${link.lastError}`
      : link.bytes === 0
        ? `no bytes arrived from ${link.path}`
        : undefined;
  }

  async *fixes(signal: AbortSignal): AsyncGenerator<Fix> {
    const queue: Fix[] = [];
    let ended = false;
    let wake: (() => void) | undefined;
    const notify = () => wake?.();
    const decoder = createDecoder({
      ...(this.#o.maxLineLength !== undefined ? { maxLineLength: this.#o.maxLineLength } : {}),
      correctTime: (t) => correctWeekRollover(t, { clock: systemClock, ...this.#o.rollover }),
      onFix: (fix) => {
        queue.push(fix);
        notify();
      },
    });
    // A source cannot drop a listener; this one goes quiet when the iteration ends.
    let active = true;
    this.#o.source.onData((chunk) => {
      if (active) decoder.pushChunk(chunk);
    });
    const onAbort = () => {
      ended = true;
      notify();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      await this.#o.source.start();
      void this.#o.source.finished?.().then(() => {
        if (active) decoder.flush();
        ended = true;
        notify();
      });
      for (;;) {
        while (queue.length > 0 && !signal.aborted) yield queue.shift() as Fix;
        if (ended || signal.aborted) return;
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
      }
    } finally {
      active = false;
      signal.removeEventListener('abort', onAbort);
      await this.#o.source.stop();
    }
  }
}
