/**
 * Time, injected. `monotonicMs` measures durations (token lifetimes, backoff) and never jumps when
 * NTP or GNSS sets the system clock; `wallMs` is only for display and file names. Fix timestamps
 * never come from here: they come from the GNSS sentences.
 */
export interface Clock {
  monotonicMs(): number;
  wallMs(): number;
}

export const systemClock: Clock = {
  monotonicMs: () => performance.now(),
  wallMs: () => Date.now(),
};

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  #mono: number;
  #wall: number;
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
    this.#mono += ms;
    this.#wall += ms;
  }
  /** Moves the wall clock only, as NTP does at boot. */
  setWall(ms: number): void {
    this.#wall = ms;
  }
}
