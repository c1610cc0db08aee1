import type { Logger } from '../log.js';
import type { Clock, Timers } from '../system/clock.js';

export interface IgnitionDebounceOptions {
  debounceS: number;
  clock: Clock;
  timers: Timers;
  logger: Logger;
  /** A debounced change (the first reading too): on or off, and the monotonic ms it began. */
  onChange: (on: boolean, monoMs: number) => void;
}

const MINUTE_MS = 60_000;
/** 3 stops and starts a minute, each held debounceS: more than a driver's key, so beyond it a wire flaps. */
export const MAX_CHANGES_PER_MINUTE = 6;
/**
 * Raw changes (edges, or polls that differ from the last) a minute beyond which the input flaps
 * even where the debounce hides it (a 10 Hz wire gives no event): a key turn with contact bounce
 * gives a handful, a cranking dip two.
 */
export const MAX_RAW_CHANGES_PER_MINUTE = 60;
/** Unstable, the input must hold still this long before its state counts again. */
export const SETTLE_MS = 60_000;

/**
 * The ignition's debounce, shared by the polled value file and the GPIO line's edges: a change
 * counts once it has held debounceS (a cranking dip of the supply lasts well under a second), and
 * is dated at the moment it was first seen. A polled file keeps giving readings; an edge comes once,
 * so a timer settles a change that nothing contradicted within debounceS.
 *
 * A floor for a flapping input (a loose wire): beyond MAX_CHANGES_PER_MINUTE debounced changes, or
 * MAX_RAW_CHANGES_PER_MINUTE raw ones, the input is unstable: one warning, no change forwarded until
 * it has held still for SETTLE_MS, then its state once if it differs from the last forwarded, and
 * one line saying it is stable again.
 */
export class IgnitionDebounce {
  readonly #options: IgnitionDebounceOptions;
  #state: boolean | undefined;
  #latest: boolean | undefined;
  #pending: { on: boolean; sinceMono: number } | undefined;
  #timer: unknown;
  /** Monotonic ms of the changes forwarded within the last minute. */
  #forwarded: number[] = [];
  readonly #raw = new PerMinute();
  /** When the raw reading last changed (monotonic ms; the first reading's time until it does). */
  #lastRawChange = 0;
  #changedSince = false;
  /** While unstable: the timer that ends it once the input has held still for SETTLE_MS, and the changes a minute that made it. */
  #unstable: { timer: unknown; changes: number } | undefined;

  constructor(options: IgnitionDebounceOptions) {
    this.#options = options;
  }

  get state(): boolean | undefined {
    return this.#state;
  }

  /**
   * Whether the reading changed within debounceS of now (a change pending, or just refused), and
   * the input is not known to flap already: what a polled input reads closely.
   */
  fresh(now: number): boolean {
    return !this.#unstable && this.#changedSince && now - this.#lastRawChange < this.#options.debounceS * 1000;
  }

  /** While the input flaps: a sentence saying so and that engine events are held. */
  unstable(): string | undefined {
    if (!this.#unstable) return undefined;
    // A polled input is read at its slower pace once unstable: the count that made it may be the larger.
    const n = Math.max(this.#unstable.changes, this.#raw.count(this.#options.clock.monotonicMs()));
    return `ignition input unstable: ${n} changes in a minute (a loose wire?); engine events held until it holds still for ${SETTLE_MS / 1000} s`;
  }

  /** One reading (a poll or an edge) at this monotonic time: the first is the state. */
  reading(on: boolean, mono: number): void {
    const changed = this.#latest !== undefined && on !== this.#latest;
    this.#latest = on;
    if (this.#state === undefined) {
      this.#state = on;
      this.#lastRawChange = mono;
      this.#options.onChange(on, mono);
      return;
    }
    if (changed) {
      this.#lastRawChange = mono;
      this.#changedSince = true;
      this.#raw.add(mono);
    }
    if (this.#unstable) {
      if (changed) this.#armSettle();
      return;
    }
    if (changed && this.#raw.count(mono) > MAX_RAW_CHANGES_PER_MINUTE) return this.#becomeUnstable();
    if (on === this.#state) {
      this.#pending = undefined;
      this.#clearTimer();
      return;
    }
    if (!this.#pending || this.#pending.on !== on) {
      this.#pending = { on, sinceMono: mono };
      this.#clearTimer();
      const left = this.#options.debounceS * 1000 - (this.#options.clock.monotonicMs() - mono);
      this.#timer = this.#options.timers.setTimeout(() => this.#settle(), Math.max(0, left));
    }
    if (mono - this.#pending.sinceMono >= this.#options.debounceS * 1000) this.#commit();
  }

  stop(): void {
    this.#clearTimer();
    if (this.#unstable) this.#options.timers.clearTimeout(this.#unstable.timer);
    this.#unstable = undefined;
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
    const now = this.#options.clock.monotonicMs();
    this.#forwarded = this.#forwarded.filter((t) => now - t < MINUTE_MS);
    if (this.#forwarded.length >= MAX_CHANGES_PER_MINUTE) return this.#becomeUnstable();
    this.#forwarded.push(now);
    this.#state = pending.on;
    this.#options.onChange(pending.on, pending.sinceMono);
  }

  #becomeUnstable(): void {
    this.#pending = undefined;
    this.#clearTimer();
    const changes = this.#raw.count(this.#options.clock.monotonicMs());
    this.#unstable = { timer: undefined, changes };
    this.#armSettle();
    this.#options.logger.warn(
      { changesLastMinute: changes, engine: this.#state ? 'on' : 'off' },
      `ignition input flapping (a loose wire?): engine events held until it holds still for ${SETTLE_MS / 1000} s`,
    );
  }

  /** (Re)starts the wait for SETTLE_MS of stillness, from the last raw change. */
  #armSettle(): void {
    const u = this.#unstable;
    if (!u) return;
    if (u.timer !== undefined) this.#options.timers.clearTimeout(u.timer);
    const left = SETTLE_MS - (this.#options.clock.monotonicMs() - this.#lastRawChange);
    u.timer = this.#options.timers.setTimeout(() => this.#stable(), Math.max(0, left));
  }

  /** Held still for SETTLE_MS: the state it holds counts, dated when it began; the count starts afresh. */
  #stable(): void {
    this.#unstable = undefined;
    this.#forwarded = [];
    this.#raw.clear();
    const on = this.#latest!;
    const changed = on !== this.#state;
    this.#options.logger.info({ engine: on ? 'on' : 'off' }, 'ignition input stable again: engine events resume');
    if (!changed) return;
    this.#state = on;
    this.#forwarded.push(this.#options.clock.monotonicMs());
    this.#options.onChange(on, this.#lastRawChange);
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) this.#options.timers.clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

/** Events counted in one-second buckets over the last minute: bounded, however fast they come. */
class PerMinute {
  readonly #buckets = new Map<number, number>();

  add(mono: number): void {
    const s = Math.floor(mono / 1000);
    this.#buckets.set(s, (this.#buckets.get(s) ?? 0) + 1);
    for (const k of this.#buckets.keys()) if (k <= s - MINUTE_MS / 1000) this.#buckets.delete(k);
  }

  count(mono: number): number {
    const s = Math.floor(mono / 1000);
    let n = 0;
    for (const [k, v] of this.#buckets) if (k > s - MINUTE_MS / 1000) n += v;
    return n;
  }

  clear(): void {
    this.#buckets.clear();
  }
}
