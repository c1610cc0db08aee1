import type { Clock, Timers } from '../system/clock.js';

export interface IgnitionDebounceOptions {
  debounceS: number;
  clock: Clock;
  timers: Timers;
  /** A debounced change (the first reading too): on or off, and the monotonic ms it began. */
  onChange: (on: boolean, monoMs: number) => void;
}

/**
 * The ignition's debounce, shared by the polled value file and the GPIO line's edges: a change
 * counts once it has held debounceS (a cranking dip of the supply lasts well under a second), and
 * is dated at the moment it was first seen. A polled file keeps giving readings; an edge comes once,
 * so a timer settles a change that nothing contradicted within debounceS.
 */
export class IgnitionDebounce {
  readonly #o: IgnitionDebounceOptions;
  #state: boolean | undefined;
  #latest: boolean | undefined;
  #pending: { on: boolean; sinceMono: number } | undefined;
  #timer: unknown;

  constructor(options: IgnitionDebounceOptions) {
    this.#o = options;
  }

  get state(): boolean | undefined {
    return this.#state;
  }

  /** One reading (a poll or an edge) at this monotonic time: the first is the state. */
  reading(on: boolean, mono: number): void {
    this.#latest = on;
    if (this.#state === undefined) {
      this.#state = on;
      this.#o.onChange(on, mono);
      return;
    }
    if (on === this.#state) {
      this.#pending = undefined;
      this.#clearTimer();
      return;
    }
    if (!this.#pending || this.#pending.on !== on) {
      this.#pending = { on, sinceMono: mono };
      this.#clearTimer();
      const left = this.#o.debounceS * 1000 - (this.#o.clock.monotonicMs() - mono);
      this.#timer = this.#o.timers.setTimeout(() => this.#settle(), Math.max(0, left));
    }
    if (mono - this.#pending.sinceMono >= this.#o.debounceS * 1000) this.#commit();
  }

  stop(): void {
    this.#clearTimer();
  }

  #settle(): void {
    this.#timer = undefined;
    if (this.#pending && this.#latest === this.#pending.on) this.#commit();
  }

  #commit(): void {
    const pending = this.#pending;
    if (!pending) return;
    this.#clearTimer();
    this.#pending = undefined;
    this.#state = pending.on;
    this.#o.onChange(pending.on, pending.sinceMono);
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) this.#o.timers.clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
