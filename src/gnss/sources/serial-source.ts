/**
 * The receiver on a serial port, with its supervisor. node-serialport does not reconnect by
 * itself: when the port errors, closes, or the USB receiver disappears (open fails with ENOENT),
 * this source retries with capped exponential backoff and jitter. The first failure is logged
 * loudly (warn); repeats are quiet (debug) until the link is back (info).
 *
 * Lines are not split here: @serialport/parser-readline buffers without bound while no newline
 * arrives (a wrong baud rate), so the pipeline's LineSplitter, which enforces
 * `gnss.maxLineLength`, does it.
 */
import { createRequire } from 'node:module';
import { systemClock, type Clock } from '../../system/clock.js';
import type { Logger } from '../../log.js';
import { describeError } from '../../errors.js';
import { scheduleReopen, type BackoffOptions } from './reopen-backoff.js';
import type { LinkState, NmeaSource } from './source.js';

/** The part of node-serialport's SerialPort this source uses. */
export interface SerialPortLike {
  open(callback: (err: Error | null) => void): void;
  close(callback?: (err: Error | null) => void): void;
  readonly isOpen: boolean;
  on(event: 'data', listener: (chunk: Buffer) => void): this;
  on(event: 'error', listener: (err: Error) => void): this;
  on(event: 'close', listener: (err?: Error | null) => void): this;
  removeAllListeners(): this;
}

export type SerialPortFactory = (options: { path: string; baudRate: number }) => SerialPortLike;

// Loaded at the first open, not with the daemon: a replay or gpsd source never needs it, and
// node-serialport with its native binding is about 13 MB of RSS.
let serialPortClass: typeof import('serialport').SerialPort | undefined;

export const defaultSerialPortFactory: SerialPortFactory = ({ path, baudRate }) => {
  serialPortClass ??= (createRequire(import.meta.url)('serialport') as typeof import('serialport')).SerialPort;
  return new serialPortClass({ path, baudRate, autoOpen: false }) as unknown as SerialPortLike;
};

export interface SerialSourceOptions {
  path: string;
  baudRate: number;
  logger: Logger;
  portFactory?: SerialPortFactory;
  backoff?: BackoffOptions;
  random?: () => number;
  /** Stamps the link's events (display only); default the system's. */
  clock?: Pick<Clock, 'wallMs'>;
}

export class SerialSource implements NmeaSource {
  readonly #options: SerialSourceOptions;
  readonly #listeners: ((chunk: Buffer) => void)[] = [];
  readonly #link: LinkState;
  #port: SerialPortLike | undefined;
  #timer: NodeJS.Timeout | undefined;
  #running = false;

  constructor(options: SerialSourceOptions) {
    this.#options = options;
    this.#link = { status: 'idle', path: options.path, attempts: 0, bytes: 0 };
  }

  onData(listener: (chunk: Buffer) => void): void {
    this.#listeners.push(listener);
  }

  link(): LinkState {
    return { ...this.#link };
  }

  /** Resolves after the first attempt, whether or not it opened: the supervisor keeps trying. */
  async start(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    await this.#open();
  }

  async stop(): Promise<void> {
    this.#running = false;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    const port = this.#port;
    this.#port = undefined;
    this.#link.status = 'stopped';
    delete this.#link.nextAttemptAt;
    if (port) await closeQuietly(port);
  }

  #now(): number {
    return (this.#options.clock ?? systemClock).wallMs();
  }

  #open(): Promise<void> {
    this.#link.status = 'opening';
    const port = (this.#options.portFactory ?? defaultSerialPortFactory)({ path: this.#options.path, baudRate: this.#options.baudRate });
    this.#port = port;
    port.on('data', (chunk: Buffer) => {
      this.#link.bytes += chunk.length;
      for (const l of this.#listeners) l(chunk);
    });
    port.on('error', (err: Error) => this.#lost(port, err));
    port.on('close', (err?: Error | null) => this.#lost(port, err ?? new Error('port closed')));
    return new Promise((resolve) => {
      port.open((err) => {
        if (err) this.#lost(port, err);
        else if (this.#port === port && this.#running) {
          if (this.#link.attempts > 0) {
            this.#link.reconnects = (this.#link.reconnects ?? 0) + 1;
            this.#options.logger.info({ path: this.#options.path, attempts: this.#link.attempts }, 'GNSS receiver link restored');
          } else this.#options.logger.info({ path: this.#options.path, baudRate: this.#options.baudRate }, 'GNSS receiver link open');
          this.#link.status = 'open';
          this.#link.attempts = 0;
          this.#link.openedAt = this.#now();
          delete this.#link.nextAttemptAt;
        }
        resolve();
      });
    });
  }

  #lost(port: SerialPortLike, err: Error): void {
    if (this.#port !== port || !this.#running) return;
    this.#port = undefined;
    port.removeAllListeners();
    // An error listener stays so that a late error from the dead port cannot crash the process.
    port.on('error', () => undefined);
    void closeQuietly(port);
    const attempts = ++this.#link.attempts;
    const message = describeError(err);
    const details = { path: this.#options.path, error: message, attempts };
    if (attempts === 1) this.#options.logger.warn(details, 'GNSS receiver link lost; retrying with backoff');
    else this.#options.logger.debug(details, 'GNSS receiver still unavailable');
    this.#link.lastError = message;
    this.#link.lastErrorAt = this.#now();
    this.#timer = scheduleReopen(this.#link, attempts, { ...this.#options, clock: this.#options.clock ?? systemClock }, () => {
      this.#timer = undefined;
      if (this.#running) void this.#open();
    });
  }
}

function closeQuietly(port: SerialPortLike): Promise<void> {
  return new Promise((resolve) => {
    if (!port.isOpen) return resolve();
    try {
      port.close(() => resolve());
    } catch {
      resolve();
    }
  });
}
