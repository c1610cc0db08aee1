/**
 * The receiver through gpsd (config `gnss.gpsd`): gpsd owns the serial port and shares it with
 * chrony, cgps, gpspipe and the agent. The agent watches with `"nmea":true` (gpsd-protocol.ts says
 * why) and hands the sentences to the pipeline as the serial source hands it bytes.
 *
 * The link is supervised like the serial port: when gpsd restarts, refuses the connection, or the
 * connection stays silent (no sentence for `silenceMs`: gpsd hung, or its receiver is gone), the
 * socket is dropped and opened again with capped exponential backoff and jitter; reopenings are
 * counted for `status`. Lines from gpsd are split with a bound (64 KiB): a huge or endless line is
 * cut and counted, a malformed JSON object is counted and skipped; memory stays bounded.
 */
import { systemClock, type Clock } from '../../system/clock.js';
import net from 'node:net';
import type { Logger } from '../../log.js';
import { describeError } from '../../errors.js';
import { LineSplitter } from '../line-splitter.js';
import { scheduleReopen, type BackoffOptions } from './reopen-backoff.js';
import { formatGpsdAddress, type GpsdAddress } from '../../config/gpsd-address.js';
import { parseGpsdLine, watchRequest, type GpsdDevice } from './gpsd-protocol.js';
import type { LinkState, NmeaSource } from './source.js';
import type { GpsdReceiverReport } from '../health/receiver-health.js';

/** The part of node's net.Socket this source uses: the seam tests and doctor can replace. */
export interface GpsdSocket {
  on(event: 'connect', listener: () => void): this;
  on(event: 'data', listener: (chunk: Buffer) => void): this;
  on(event: 'error', listener: (err: Error) => void): this;
  on(event: 'close', listener: () => void): this;
  write(data: string): boolean;
  destroy(): void;
  removeAllListeners(): this;
}

export type GpsdConnector = (address: GpsdAddress) => GpsdSocket;

export const defaultGpsdConnector: GpsdConnector = (a) =>
  ('socketPath' in a ? net.createConnection({ path: a.socketPath }) : net.createConnection({ host: a.host, port: a.port })) as GpsdSocket;

/** No sentence (or no accepted connection) for this long: reconnect. */
const SILENCE_DEFAULT_MS = 10_000;

/** Longest line kept from gpsd (its DEVICES answer for many receivers is a few KiB). */
export const GPSD_MAX_LINE = 65_536;

export interface GpsdCounters {
  /** JSON objects from gpsd that were understood. */
  json: number;
  /** Lines that were neither NMEA nor a JSON object gpsd sends (broken, or not gpsd at all). */
  malformed: number;
  /** Lines longer than GPSD_MAX_LINE, cut to it. */
  overlong: number;
  /** Bytes of those lines that were dropped rather than held. */
  droppedBytes: number;
  /** Connections dropped because nothing arrived for silenceMs. */
  silences: number;
}

export interface GpsdSourceOptions {
  address: GpsdAddress;
  /** Config `gnss.gpsdDevice`: watch this receiver only when gpsd serves several. */
  device?: string;
  logger: Logger;
  connect?: GpsdConnector;
  backoff?: BackoffOptions;
  /** No sentence for this long on an open connection, or no accepted connection for this long: reconnect. Default 10 s. */
  silenceMs?: number;
  random?: () => number;
  /** Stamps the link's events (display only); default the system's. */
  clock?: Pick<Clock, 'wallMs'>;
}

export class GpsdSource implements NmeaSource {
  readonly counters: GpsdCounters = { json: 0, malformed: 0, overlong: 0, droppedBytes: 0, silences: 0 };
  readonly #options: GpsdSourceOptions;
  readonly #listeners: ((chunk: Buffer) => void)[] = [];
  readonly #reportListeners: ((report: GpsdReceiverReport) => void)[] = [];
  readonly #link: LinkState;
  readonly #where: string;
  #socket: GpsdSocket | undefined;
  #retryTimer: NodeJS.Timeout | undefined;
  #silenceTimer: NodeJS.Timeout | undefined;
  #running = false;
  #everOpen = false;
  #device: GpsdDevice | undefined;
  #release: string | undefined;

  constructor(options: GpsdSourceOptions) {
    this.#options = options;
    this.#where = `gpsd ${formatGpsdAddress(options.address)}`;
    this.#link = { status: 'idle', path: this.#describe(), attempts: 0, bytes: 0, reconnects: 0 };
  }

  onData(listener: (chunk: Buffer) => void): void {
    this.#listeners.push(listener);
  }

  onReceiverReport(listener: (report: GpsdReceiverReport) => void): void {
    this.#reportListeners.push(listener);
  }

  link(): LinkState {
    return { ...this.#link, path: this.#describe() };
  }

  /** What gpsd said about itself and the receiver, for doctor. */
  info(): { release?: string; device?: GpsdDevice } {
    return { ...(this.#release !== undefined ? { release: this.#release } : {}), ...(this.#device ? { device: { ...this.#device } } : {}) };
  }

  /** Resolves after the first attempt, whether or not it connected: the supervisor keeps trying. */
  async start(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    await this.#open();
  }

  async stop(): Promise<void> {
    this.#running = false;
    clearTimeout(this.#retryTimer);
    clearTimeout(this.#silenceTimer);
    this.#retryTimer = undefined;
    this.#silenceTimer = undefined;
    const socket = this.#socket;
    this.#socket = undefined;
    this.#link.status = 'stopped';
    delete this.#link.nextAttemptAt;
    if (socket) {
      socket.removeAllListeners();
      socket.on('error', () => undefined);
      socket.destroy();
    }
  }

  #describe(): string {
    const device = this.#device?.path ?? this.#options.device;
    return device !== undefined ? `${this.#where} -> ${device}` : this.#where;
  }

  #now(): number {
    return (this.#options.clock ?? systemClock).wallMs();
  }

  #open(): Promise<void> {
    this.#link.status = 'opening';
    const socket = (this.#options.connect ?? defaultGpsdConnector)(this.#options.address);
    this.#socket = socket;
    const splitter = new LineSplitter(GPSD_MAX_LINE);
    return new Promise((resolve) => {
      // A gpsd on another host behind a network that drops packets would otherwise hold this
      // attempt (and start-up, doctor, location here) for the kernel's connect timeout of about
      // two minutes: past systemd's TimeoutStartSec. The silence period bounds the connect too.
      const ms = this.#options.silenceMs ?? SILENCE_DEFAULT_MS;
      clearTimeout(this.#silenceTimer);
      this.#silenceTimer = setTimeout(() => {
        this.#silenceTimer = undefined;
        if (this.#socket === socket && this.#running) {
          this.#lost(socket, new Error(`gpsd did not accept the connection within ${(ms / 1000).toFixed(0)} s`));
        }
        resolve();
      }, ms);
      this.#silenceTimer.unref?.();
      socket.on('connect', () => {
        if (this.#socket !== socket || !this.#running) return resolve();
        socket.write(watchRequest(this.#options.device));
        const details = { gpsd: formatGpsdAddress(this.#options.address), attempts: this.#link.attempts };
        if (this.#everOpen) {
          this.#link.reconnects = (this.#link.reconnects ?? 0) + 1;
          // Quiet while gpsd has nothing to give (receiver unplugged): every silence reconnects.
          if (this.#link.attempts > 1) this.#options.logger.debug(details, 'gpsd link open again, waiting for sentences');
          else this.#options.logger.info(details, 'gpsd link restored');
        } else this.#options.logger.info(details, 'gpsd link open');
        this.#everOpen = true;
        this.#link.status = 'open';
        this.#link.openedAt = this.#now();
        delete this.#link.nextAttemptAt;
        this.#armSilence(socket);
        resolve();
      });
      socket.on('data', (chunk: Buffer) => {
        if (this.#socket !== socket) return;
        const { overlong, droppedBytes } = splitter.counters;
        splitter.push(chunk, (line) => this.#line(line, socket));
        this.counters.overlong += splitter.counters.overlong - overlong;
        this.counters.droppedBytes += splitter.counters.droppedBytes - droppedBytes;
      });
      socket.on('error', (err: Error) => {
        this.#lost(socket, err);
        resolve();
      });
      socket.on('close', () => {
        this.#lost(socket, new Error('gpsd closed the connection'));
        resolve();
      });
    });
  }

  #line(line: string, socket: GpsdSocket): void {
    const first = line.charCodeAt(0);
    // '$' NMEA, '!' AIS-style encapsulation (passed on; the decoder counts what it cannot use).
    if (first === 0x24 || first === 0x21) {
      // Failed attempts count until sentences flow again, so that a gpsd without a receiver is
      // retried ever more slowly (the backoff) instead of every silence period.
      this.#link.attempts = 0;
      const chunk = Buffer.from(`${line}\n`, 'latin1');
      this.#link.bytes += chunk.length;
      this.#armSilence(socket);
      for (const l of this.#listeners) l(chunk);
      return;
    }
    if (first !== 0x7b) {
      if (line.trim() !== '') this.counters.malformed++;
      return;
    }
    // SKY repeats every satellite every cycle and nothing in it is read: not parsed.
    if (line.startsWith('{"class":"SKY"')) {
      this.counters.json++;
      return;
    }
    const m = parseGpsdLine(line);
    if (m.kind === 'malformed') {
      this.counters.malformed++;
      if (this.counters.malformed === 1)
        this.#options.logger.warn({ gpsd: this.#where }, 'gpsd sent a line that is not gpsd JSON; skipping such lines');
      return;
    }
    this.counters.json++;
    switch (m.kind) {
      case 'version':
        this.#release = m.release;
        break;
      case 'devices': {
        const d = this.#pick(m.devices);
        if (d) this.#device = d;
        if (!d || !d.active) this.#setError(this.#noDevice(m.devices));
        else delete this.#link.lastError;
        break;
      }
      case 'device':
        if (this.#options.device !== undefined && m.device.path !== this.#options.device) break;
        if (!m.device.active) {
          this.#device = { ...this.#device, ...m.device };
          this.#setError(`gpsd lost its receiver ${m.device.path} (unplugged?); waiting for it`);
        } else {
          this.#device = { ...this.#device, ...m.device };
          delete this.#link.lastError;
        }
        break;
      case 'error':
        this.#setError(`gpsd: ${m.message}`);
        break;
      case 'tpv':
        if (this.#options.device !== undefined && m.device !== undefined && m.device !== this.#options.device) break;
        for (const l of this.#reportListeners) l(m.report);
        break;
      default:
        break;
    }
  }

  #pick(devices: GpsdDevice[]): GpsdDevice | undefined {
    if (this.#options.device !== undefined) return devices.find((d) => d.path === this.#options.device);
    return devices.find((d) => d.active) ?? devices[0];
  }

  #noDevice(devices: GpsdDevice[]): string {
    if (this.#options.device !== undefined)
      return `gpsd does not serve ${this.#options.device} (gnss.gpsdDevice); it has ${devices.map((d) => d.path).join(', ') || 'no receiver'}`;
    return 'gpsd has no receiver yet (check DEVICES= in /etc/default/gpsd, or plug it in)';
  }

  #setError(message: string): void {
    if (this.#link.lastError !== message) this.#options.logger.warn({ gpsd: this.#where }, message);
    this.#link.lastError = message;
    this.#link.lastErrorAt = this.#now();
  }

  #armSilence(socket: GpsdSocket): void {
    clearTimeout(this.#silenceTimer);
    const ms = this.#options.silenceMs ?? SILENCE_DEFAULT_MS;
    this.#silenceTimer = setTimeout(() => {
      this.#silenceTimer = undefined;
      if (this.#socket !== socket || !this.#running) return;
      this.counters.silences++;
      this.#lost(socket, new Error(`no sentence from gpsd for ${(ms / 1000).toFixed(0)} s`), true);
    }, ms);
    this.#silenceTimer.unref?.();
  }

  #lost(socket: GpsdSocket, err: Error, silence = false): void {
    if (this.#socket !== socket || !this.#running) return;
    this.#socket = undefined;
    clearTimeout(this.#silenceTimer);
    socket.removeAllListeners();
    // An error listener stays so that a late error from the dead socket cannot crash the process.
    socket.on('error', () => undefined);
    socket.destroy();
    const attempts = ++this.#link.attempts;
    const message = describeError(err);
    const details = { gpsd: this.#where, error: message, attempts };
    if (attempts === 1) this.#options.logger.warn(details, 'gpsd link lost; reconnecting with backoff');
    else this.#options.logger.debug(details, 'gpsd still unavailable');
    // gpsd's own complaint (no receiver, unknown device) explains a silence better than the silence.
    const complaint = this.#link.lastError !== undefined && /^gpsd (has no|does not serve|lost)/.test(this.#link.lastError);
    if (!(silence && complaint)) {
      this.#link.lastError = message;
      this.#link.lastErrorAt = this.#now();
    }
    this.#retryTimer = scheduleReopen(this.#link, attempts, { ...this.#options, clock: this.#options.clock ?? systemClock }, () => {
      this.#retryTimer = undefined;
      if (this.#running) void this.#open();
    });
  }
}
