import { GnssPipeline } from '../gnss/pipeline.js';
import { silentLogger, type Logger } from '../log.js';
import { systemClock, type Clock } from '../system/clock.js';
import type { Fix } from '../fix/fix.js';
import type { RolloverOptions } from '../gnss/rollover.js';
import type { NmeaSource } from '../gnss/sources/source.js';
import type { FixFeed } from './fix-feed.js';

/**
 * Fixes straight from a GNSS source (the serial port, gpsd or a replay file), through the daemon's
 * own pipeline (gnss/pipeline.ts: the same decoding and week-rollover correction), taken at its
 * every-epoch tap: the recording policy thins a standing vehicle to one fix every few minutes, and
 * `location here` wants every epoch. The quality gate is applied by the capture (capture.ts).
 */

/** A source that can tell when it has delivered everything (a replay file). */
type MaybeFinishing = NmeaSource & { finished?: () => Promise<void> };

export interface GnssFixFeedOptions {
  source: MaybeFinishing;
  /** For messages: "the receiver on /dev/ttyACM0", "the replay of /x.nmea". */
  description: string;
  maxLineLength?: number;
  rollover?: Pick<RolloverOptions, 'minDateMarginDays' | 'releaseDateMs'>;
  /** The host's clock: it bounds the week-rollover correction (never timestamps a fix). */
  clock?: Clock;
  logger?: Logger;
}

export class GnssFixFeed implements FixFeed {
  readonly #options: GnssFixFeedOptions;

  constructor(options: GnssFixFeedOptions) {
    this.#options = options;
  }

  get description(): string {
    return this.#options.description;
  }

  /** The link's last error, for a capture that got nothing ("cannot open /dev/ttyACM0: ..."). */
  diagnose(): string | undefined {
    const link = this.#options.source.link();
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
    // The pipeline records nothing here: its recorded fixes go nowhere, its every epoch to the queue.
    const pipeline = new GnssPipeline({
      source: this.#options.source,
      logger: this.#options.logger ?? silentLogger(),
      sink: { record: () => undefined },
      clock: this.#options.clock ?? systemClock,
      ...(this.#options.rollover ? { quality: this.#options.rollover } : {}),
      ...(this.#options.maxLineLength !== undefined ? { maxLineLength: this.#options.maxLineLength } : {}),
      onEpoch: (fix) => {
        queue.push(fix);
        notify();
      },
    });
    const onAbort = () => {
      ended = true;
      notify();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      await pipeline.start();
      void this.#options.source.finished?.().then(() => {
        pipeline.endOfInput();
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
      signal.removeEventListener('abort', onAbort);
      await pipeline.stop();
    }
  }
}
