import { readFile } from 'node:fs/promises';
import type { Logger } from '../log.js';
import type { Clock, Timers } from '../system/clock.js';
import { IgnitionDebounce } from './ignition-debounce.js';

/**
 * The ignition from a value file, polled (ignition.file): a sysfs GPIO `value`, a hwmon or IIO
 * voltage. On when the number in it is above onAbove. Debounced (ignition-debounce.ts), each change
 * dated at the moment it was first read, on the monotonic clock (the tracker turns that into GNSS time).
 */
export interface IgnitionInputOptions {
  file: string;
  onAbove: number;
  pollMs: number;
  debounceS: number;
  clock: Clock;
  timers: Timers;
  logger: Logger;
  /** The file's number (default readIgnitionValue; tests count the reads). */
  read?: (file: string) => Promise<number>;
  /** A debounced change (the first reading too): on or off, and the monotonic ms it began. */
  onChange: (on: boolean, monoMs: number) => void;
}

/** The number a value file holds, or why it holds none. */
export async function readIgnitionValue(file: string): Promise<number> {
  const text = (await readFile(file, 'utf8')).trim();
  const value = Number(text.split(/\s+/)[0]);
  if (text === '' || !Number.isFinite(value)) throw new Error(`${file} holds "${text.slice(0, 40)}", not a number`);
  return value;
}

export class FileIgnitionInput {
  readonly #o: IgnitionInputOptions;
  #timer: unknown;
  #stopped = true;
  readonly #debounce: IgnitionDebounce;
  #failing = false;
  #lastError: string | undefined;

  constructor(options: IgnitionInputOptions) {
    this.#o = options;
    this.#debounce = new IgnitionDebounce(options);
  }

  get state(): boolean | undefined {
    return this.#debounce.state;
  }

  /** Why the value file cannot be read now (undefined while it can). */
  fault(): string | undefined {
    return this.#failing ? this.#lastError : undefined;
  }

  async start(): Promise<void> {
    this.#stopped = false;
    await this.#poll();
  }

  stop(): void {
    this.#stopped = true;
    this.#debounce.stop();
    if (this.#timer !== undefined) this.#o.timers.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  async #poll(): Promise<void> {
    this.#timer = undefined;
    if (this.#stopped) return;
    try {
      const on = (await (this.#o.read ?? readIgnitionValue)(this.#o.file)) > this.#o.onAbove;
      if (this.#failing) this.#o.logger.info({ file: this.#o.file }, 'ignition input readable again');
      this.#failing = false;
      this.#lastError = undefined;
      this.#debounce.reading(on, this.#o.clock.monotonicMs());
    } catch (e) {
      // Said once per spell: a missing file every 200 ms is one fact, not a log line each time.
      if (!this.#failing)
        this.#o.logger.warn({ file: this.#o.file, err: (e as Error).message }, 'ignition input unreadable: engine state kept');
      this.#failing = true;
      this.#lastError = `${this.#o.file}: ${(e as Error).message}`;
    }
    if (!this.#stopped) this.#timer = this.#o.timers.setTimeout(() => void this.#poll(), this.#o.pollMs);
  }
}
