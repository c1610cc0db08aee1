import type { LinkState, NmeaSource } from '../../src/gnss/sources/source.js';
import type { DriveVariant } from './drives.js';

/**
 * One vehicle's receiver in the fleet: its drive variant from its own start offset, one epoch per
 * tick of the shared FleetTicker (one timer for the whole fleet instead of a thousand).
 */
export class FleetReceiver implements NmeaSource {
  readonly #variant: DriveVariant;
  readonly #listeners: ((chunk: Buffer) => void)[] = [];
  readonly #link: LinkState;
  #next: number;
  #running = false;

  constructor(variant: DriveVariant, offsetEpochs: number, label: string) {
    this.#variant = variant;
    this.#next = offsetEpochs % variant.epochs.length;
    this.#link = { status: 'idle', path: label, attempts: 0, bytes: 0 };
  }

  async start(): Promise<void> {
    this.#running = true;
    this.#link.status = 'open';
    this.#link.openedAt = Date.now();
  }

  async stop(): Promise<void> {
    this.#running = false;
    this.#link.status = 'stopped';
  }

  onData(listener: (chunk: Buffer) => void): void {
    this.#listeners.push(listener);
  }

  link(): LinkState {
    return { ...this.#link };
  }

  /** The next epoch (the drive wraps around at its end, as a vehicle driving the route again). */
  tick(): void {
    if (!this.#running) return;
    const chunk = this.#variant.epochs[this.#next]!;
    this.#next = (this.#next + 1) % this.#variant.epochs.length;
    this.#link.bytes += chunk.length;
    for (const l of this.#listeners) l(chunk);
  }
}

/**
 * One GNSS second every `periodMs` of real time for every receiver. A tick that comes late (a busy
 * event loop) catches up, so GNSS time stays locked to real time x speed, like every scaled timer.
 */
export class FleetTicker {
  readonly #periodMs: number;
  readonly #receivers: FleetReceiver[] = [];
  #timer: NodeJS.Timeout | undefined;
  #start = 0;
  #ticks = 0;
  /** Most ticks emitted in one wake-up (how far the process fell behind). */
  maxCatchUp = 0;

  constructor(periodMs: number) {
    this.#periodMs = periodMs;
  }

  add(r: FleetReceiver): void {
    this.#receivers.push(r);
  }

  start(): void {
    this.#start = performance.now();
    this.#timer = setInterval(() => this.#wake(), this.#periodMs);
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #wake(): void {
    const due = Math.floor((performance.now() - this.#start) / this.#periodMs);
    const n = due - this.#ticks;
    this.maxCatchUp = Math.max(this.maxCatchUp, n);
    for (let k = 0; k < n; k++) for (const r of this.#receivers) r.tick();
    this.#ticks = due;
  }
}
