/**
 * A recorded NMEA log as the receiver: paced like the original (the time between successive
 * epochs, divided by `speed`), or as fast as possible with `speed` 0 (tests, benchmarks). Pacing
 * follows the sentences' own UTC times, so a log replays at its receiver's rate, 1 to 10 Hz.
 */
import { systemClock, type Clock } from '../../system/clock.js';
import { open, type FileHandle } from 'node:fs/promises';
import type { Logger } from '../../log.js';
import { describeError } from '../../errors.js';
import { timeOfDay } from '../sentences/fields.js';
import type { LinkState, NmeaSource } from './source.js';

export interface ReplaySourceOptions {
  file: string;
  /** 1 = as recorded, 10 = ten times faster, 0 = as fast as possible. */
  speed: number;
  logger: Logger;
  /** Longest pause between two epochs, ms before the speed factor (a gap in the log is not replayed). */
  maxPauseMs?: number;
  /** Stamps the link's events (display only); default the system's. */
  clock?: Pick<Clock, 'wallMs'>;
}

/** Lines per burst when replaying as fast as possible, between yields to the event loop. */
const BURST = 2000;

/**
 * The file's lines, read 4 KiB at a time: a drive at 10 Hz is about 0.3 MB a minute, and a log
 * held whole (with its lines split out) stayed in the daemon's heap for the whole replay. 64 KiB
 * (13 s of a real-time drive) kept its lines long enough to be promoted: 7 kB/s of old-space garbage.
 */
async function* readLines(handle: FileHandle): AsyncGenerator<{ line: string; last: boolean }> {
  const buf = Buffer.alloc(4 * 1024);
  let rest = '';
  for (;;) {
    const { bytesRead } = await handle.read(buf, 0, buf.length, null);
    if (bytesRead === 0) break;
    const parts = (rest + buf.toString('latin1', 0, bytesRead)).split('\n');
    rest = parts.pop() ?? '';
    for (const line of parts) yield { line, last: false };
  }
  if (rest !== '') yield { line: rest, last: true };
}

/** The UTC time of day a line carries (GGA, RMC, GNS: field 1; GLL: field 5), if any. */
function lineTime(line: string): number | undefined {
  const tag = line.slice(line.indexOf('$') + 3, line.indexOf('$') + 6);
  if (tag !== 'GGA' && tag !== 'RMC' && tag !== 'GNS' && tag !== 'GLL') return undefined;
  const fields = line.split(',');
  return timeOfDay(tag === 'GLL' ? fields[5] : fields[1]);
}

export class ReplaySource implements NmeaSource {
  readonly #options: ReplaySourceOptions;
  readonly #listeners: ((chunk: Buffer) => void)[] = [];
  readonly #link: LinkState;
  #running = false;
  #timer: NodeJS.Timeout | undefined;
  #wake: (() => void) | undefined;
  #done: Promise<void> | undefined;

  constructor(options: ReplaySourceOptions) {
    this.#options = options;
    this.#link = { status: 'idle', path: options.file, attempts: 0, bytes: 0 };
  }

  onData(listener: (chunk: Buffer) => void): void {
    this.#listeners.push(listener);
  }

  link(): LinkState {
    return { ...this.#link };
  }

  async start(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    this.#link.status = 'opening';
    let handle: FileHandle;
    try {
      handle = await open(this.#options.file, 'r');
    } catch (e) {
      this.#readFailed(e);
      return;
    }
    this.#link.status = 'open';
    this.#link.openedAt = (this.#options.clock ?? systemClock).wallMs();
    this.#done = this.#replay(readLines(handle))
      .catch((e: unknown) => this.#readFailed(e))
      .finally(() => handle.close().catch(() => undefined));
  }

  #readFailed(e: unknown): void {
    this.#link.status = 'ended';
    this.#link.lastError = describeError(e);
    this.#link.lastErrorAt = (this.#options.clock ?? systemClock).wallMs();
    this.#options.logger.error({ file: this.#options.file, error: this.#link.lastError }, 'cannot read the NMEA replay file');
  }

  async stop(): Promise<void> {
    this.#running = false;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#wake?.();
    this.#link.status = 'stopped';
  }

  /** Resolves when the whole file was delivered (or the source stopped). */
  finished(): Promise<void> {
    return this.#done ?? Promise.resolve();
  }

  async #replay(lines: AsyncGenerator<{ line: string; last: boolean }>): Promise<void> {
    let lastTime: number | undefined;
    let i = 0;
    for await (const { line, last } of lines) {
      if (!this.#running) break;
      if (this.#options.speed > 0) {
        const t = lineTime(line);
        if (t !== undefined) {
          if (lastTime !== undefined && t > lastTime)
            await this.#sleep(Math.min(t - lastTime, this.#options.maxPauseMs ?? 10_000) / this.#options.speed);
          lastTime = t;
        }
      } else if (i % BURST === BURST - 1) {
        await new Promise<void>((r) => setImmediate(r));
      }
      i++;
      if (!this.#running) break;
      const chunk = Buffer.from(last ? line : `${line}\n`, 'latin1');
      this.#link.bytes += chunk.length;
      for (const l of this.#listeners) l(chunk);
    }
    if (this.#running) {
      this.#link.status = 'ended';
      this.#options.logger.info({ file: this.#options.file }, 'NMEA replay finished');
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.#wake = resolve;
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        this.#wake = undefined;
        resolve();
      }, ms);
    });
  }
}
