import { constants } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import type { Logger } from '../log.js';
import type { Clock, Timers } from '../system/clock.js';
import { IgnitionDebounce } from './ignition-debounce.js';

/**
 * The ignition from a value file, polled (ignition.file): a sysfs GPIO `value`, a hwmon or IIO
 * voltage. On when the number in it is above onAbove. Debounced (ignition-debounce.ts), each change
 * dated at the moment it was first read, on the monotonic clock (the tracker turns that into GNSS time).
 */
export interface FileIgnitionOptions {
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

/** A value is a number and a newline: sysfs, hwmon and IIO give under 20 bytes. */
const READ_BYTES = 64;
/** A sysfs read answers in microseconds, an I2C hwmon sensor in tens of ms. */
export const READ_TIMEOUT_MS = 1000;
/**
 * While a change is fresh (within debounceS) the file is read this often: a wire flapping faster
 * than pollMs would alias into a slow signal the debounce lets through (10 Hz read every 200 ms
 * changes every few seconds); read every 20 ms it flaps, up to 25 Hz. 100 reads per change; once
 * the input is unstable it is read at pollMs again (a wire flapping for hours costs no more).
 */
const FRESH_POLL_MS = 20;
/** A file rewritten in place is empty for microseconds; one that stays empty this long gives no value. */
const EMPTY_FAULT_MS = 2000;
const VALUE_FILE_FIX =
  'ignition.file must be a value file such as /sys/class/gpio/gpioN/value, a hwmon inN_input or an IIO in_voltageN_raw';

/** Why a value file gives no number: the problem (naming the file) and, where known, the fix. */
export class IgnitionFileError extends Error {
  constructor(
    readonly problem: string,
    readonly fix?: string,
    /** Empty: a file rewritten in place read between its truncation and its write. */
    readonly empty = false,
  ) {
    super(fix ? `${problem}: ${fix}` : problem);
  }
}

/** Reads that outlived their timeout, by file: the next read of it waits for none of them. */
const hanging = new Map<string, number>();

/**
 * The number a value file holds, or why it holds none (an IgnitionFileError). Only a regular file
 * (sysfs attributes are ones, of size 4096) or a character device is read, opened non-blocking (a
 * FIFO without a writer would block the open, and a read with it), at most READ_BYTES, within
 * timeoutMs; the descriptor is closed on every path, a read that timed out closed when it ends.
 */
export async function readIgnitionValue(file: string, timeoutMs = READ_TIMEOUT_MS): Promise<number> {
  const since = hanging.get(file);
  if (since !== undefined)
    throw new IgnitionFileError(`${file} has not answered a read started ${Math.round((performance.now() - since) / 1000)} s ago`);
  const read = (async () => {
    const text = await readFirstBytes(file);
    // A file rewritten in place (truncated, then written) can be read empty between the two: once more.
    return text.trim() === '' ? readFirstBytes(file) : text;
  })();
  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      timedOut = true;
      reject(new IgnitionFileError(`${file} gave no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    timer.unref();
  });
  try {
    return parseValue(file, await Promise.race([read, timeout]));
  } catch (e) {
    if (timedOut) {
      hanging.set(file, performance.now());
      void read.catch(() => undefined).finally(() => hanging.delete(file));
    }
    throw e;
  } finally {
    clearTimeout(timer);
  }
}

function parseValue(file: string, text: string): number {
  const t = text.trim();
  if (t === '') throw new IgnitionFileError(`${file} is empty`, undefined, true);
  const token = t.split(/\s+/)[0]!;
  // A number cut off by the end of what was read is no number.
  const whole = text.length < READ_BYTES || /\s/.test(text.slice(text.indexOf(token) + token.length));
  const value = Number(token);
  if (!whole || !Number.isFinite(value))
    throw new IgnitionFileError(`${file} holds "${t.slice(0, 40).replace(/[^\x20-\x7e]/g, '?')}", not a number`);
  return value;
}

async function readFirstBytes(file: string): Promise<string> {
  let kind: string | undefined;
  try {
    kind = unreadableKind(await stat(file));
  } catch (e) {
    throw openError(file, e as NodeJS.ErrnoException);
  }
  if (kind) throw new IgnitionFileError(`${file} is ${kind}, not a value file`, VALUE_FILE_FIX);
  let handle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (e) {
    throw openError(file, e as NodeJS.ErrnoException);
  }
  try {
    // Replaced between the stat and the open: the descriptor's own type is the one read.
    const swapped = unreadableKind(await handle.stat());
    if (swapped) throw new IgnitionFileError(`${file} is ${swapped}, not a value file`, VALUE_FILE_FIX);
    const buffer = Buffer.alloc(READ_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, READ_BYTES, null);
    return buffer.toString('latin1', 0, bytesRead);
  } catch (e) {
    if (e instanceof IgnitionFileError) throw e;
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'EAGAIN') throw new IgnitionFileError(`${file} has no value to read now (EAGAIN)`);
    throw new IgnitionFileError(`${file} cannot be read: ${err.code ?? err.message}`);
  } finally {
    await handle.close();
  }
}

/** What a file is when it is not one a value can be read from (undefined: a regular file or a character device). */
function unreadableKind(s: {
  isFile(): boolean;
  isCharacterDevice(): boolean;
  isFIFO(): boolean;
  isSocket(): boolean;
  isDirectory(): boolean;
  isBlockDevice(): boolean;
}): string | undefined {
  if (s.isFile() || s.isCharacterDevice()) return undefined;
  if (s.isFIFO()) return 'a FIFO (named pipe)';
  if (s.isSocket()) return 'a socket';
  if (s.isDirectory()) return 'a directory';
  if (s.isBlockDevice()) return 'a block device';
  return 'neither a regular file nor a character device';
}

function openError(file: string, e: NodeJS.ErrnoException): IgnitionFileError {
  if (e.code === 'ENOENT') return new IgnitionFileError(`${file} does not exist`);
  if (e.code === 'EACCES' || e.code === 'EPERM')
    return new IgnitionFileError(`${file} cannot be read: permission denied`, 'let the service user read it');
  return new IgnitionFileError(`${file} cannot be read: ${e.code ?? e.message}`);
}

export class FileIgnitionInput {
  readonly #options: FileIgnitionOptions;
  #timer: unknown;
  #stopped = true;
  readonly #debounce: IgnitionDebounce;
  #failing = false;
  #lastError: string | undefined;
  /** Since when every read found the file empty (monotonic ms). */
  #emptySince: number | undefined;

  constructor(options: FileIgnitionOptions) {
    this.#options = options;
    this.#debounce = new IgnitionDebounce(options);
  }

  get state(): boolean | undefined {
    return this.#debounce.state;
  }

  /** Why the value file cannot be read now (undefined while it can): a sentence naming the file. */
  fault(): string | undefined {
    return this.#failing ? this.#lastError : undefined;
  }

  /** Why engine events are held now: the input flaps (ignition-debounce.ts). */
  unstable(): string | undefined {
    return this.#debounce.unstable();
  }

  async start(): Promise<void> {
    this.#stopped = false;
    await this.#poll();
  }

  stop(): void {
    this.#stopped = true;
    this.#debounce.stop();
    if (this.#timer !== undefined) this.#options.timers.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  async #poll(): Promise<void> {
    this.#timer = undefined;
    if (this.#stopped) return;
    try {
      const on = (await (this.#options.read ?? readIgnitionValue)(this.#options.file)) > this.#options.onAbove;
      if (this.#failing) this.#options.logger.info({ file: this.#options.file }, 'ignition input readable again');
      this.#failing = false;
      this.#lastError = undefined;
      this.#emptySince = undefined;
      this.#debounce.reading(on, this.#options.clock.monotonicMs());
    } catch (e) {
      if (this.#quietlyEmpty(e)) return this.#next();
      // Said once per spell: a missing file every 200 ms is one fact, not a log line each time.
      if (!this.#failing)
        this.#options.logger.warn({ file: this.#options.file, err: (e as Error).message }, 'ignition input unreadable: engine state kept');
      this.#failing = true;
      this.#lastError = (e as Error).message;
    }
    this.#next();
  }

  #next(): void {
    if (this.#stopped) return;
    const fresh = this.#debounce.fresh(this.#options.clock.monotonicMs());
    this.#timer = this.#options.timers.setTimeout(
      () => void this.#poll(),
      fresh ? Math.min(this.#options.pollMs, FRESH_POLL_MS) : this.#options.pollMs,
    );
  }

  /**
   * An empty read of a file rewritten in place is no reading and no fault: skipped without a word.
   * Empty for EMPTY_FAULT_MS, the file gives no value, which is a fault.
   */
  #quietlyEmpty(e: unknown): boolean {
    if (!(e instanceof IgnitionFileError) || !e.empty) {
      this.#emptySince = undefined;
      return false;
    }
    const now = this.#options.clock.monotonicMs();
    this.#emptySince ??= now;
    return now - this.#emptySince < EMPTY_FAULT_MS;
  }
}
