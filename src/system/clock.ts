/**
 * Time, injected. `monotonicMs` measures durations (token lifetimes, backoff) and never jumps when
 * NTP or GNSS sets the system clock; `wallMs` is only for display and file names. Fix timestamps
 * never come from here: they come from the GNSS sentences.
 */
export interface Clock {
  monotonicMs(): number;
  wallMs(): number;
}

/** Timers, injected next to the clock: a component that waits (a backoff) waits on the clock it measures with. */
export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export const systemClock: Clock = {
  monotonicMs: () => performance.now(),
  wallMs: () => Date.now(),
};

/** A clock tests move by hand; its timers fire, in order, when advance() reaches them. */
export class ManualClock implements Clock, Timers {
  #mono: number;
  #wall: number;
  #timers = new Map<number, { at: number; fn: () => void }>();
  #nextTimer = 1;
  constructor(start: { monotonicMs?: number; wallMs?: number } = {}) {
    this.#mono = start.monotonicMs ?? 0;
    this.#wall = start.wallMs ?? Date.UTC(2026, 10, 22);
  }
  monotonicMs(): number {
    return this.#mono;
  }
  wallMs(): number {
    return this.#wall;
  }
  advance(ms: number): void {
    const end = this.#mono + ms;
    for (;;) {
      let due: [number, { at: number; fn: () => void }] | undefined;
      for (const t of this.#timers) if (t[1].at <= end && (!due || t[1].at < due[1].at)) due = t;
      if (!due) break;
      this.#timers.delete(due[0]);
      this.#wall += Math.max(0, due[1].at - this.#mono);
      this.#mono = Math.max(this.#mono, due[1].at);
      due[1].fn();
    }
    this.#wall += end - this.#mono;
    this.#mono = end;
  }
  setTimeout(fn: () => void, ms: number): number {
    const id = this.#nextTimer++;
    this.#timers.set(id, { at: this.#mono + Math.max(0, ms), fn });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.#timers.delete(handle as number);
  }
  /** Monotonic ms of the next timer, if any. */
  nextTimerAt(): number | undefined {
    let at: number | undefined;
    for (const t of this.#timers.values()) if (at === undefined || t.at < at) at = t.at;
    return at;
  }
  /** Moves the wall clock only, as NTP does at boot. */
  setWall(ms: number): void {
    this.#wall = ms;
  }
}
