/**
 * A platform of limited capacity: requests are served at `ratePerS` one after another
 * (a FIFO queue in front of the service), so the wait, and with it the latency a client sees,
 * grows with the queue; past `queueBound` waiting requests the platform answers `rejectStatus`
 * at once (429 or 503, with `Retry-After` or without). `queueBound` Infinity: a platform that only
 * slows down and never refuses. No capacity set: unlimited, as before.
 *
 * Pure arithmetic on a given clock (ms): the simulator applies it in real time, bench:fleet's
 * simulated-time platform in virtual time, so both push back alike.
 */
export interface CapacitySpec {
  /** Requests served per second. */
  ratePerS: number;
  /** Requests waiting at most; beyond it rejected. Default Infinity (only slows down). */
  queueBound?: number;
  /** The answer beyond the bound: 429 (default) or 503. */
  rejectStatus?: 429 | 503;
  /** Retry-After (seconds) on those answers; absent: none. */
  retryAfterS?: number;
}

export type Admission = { kind: 'serve'; waitMs: number } | { kind: 'reject'; status: 429 | 503; retryAfterS?: number };

export interface CapacityCounters {
  served: number;
  rejected: number;
  /** Longest wait in the queue, ms. */
  maxWaitMs: number;
}

export class CapacityModel {
  readonly spec: CapacitySpec;
  /** When the service is free again (ms). */
  #freeAt = -Infinity;
  readonly counters: CapacityCounters = { served: 0, rejected: 0, maxWaitMs: 0 };

  constructor(spec: CapacitySpec) {
    if (!(spec.ratePerS > 0)) throw new Error('capacity ratePerS must be > 0');
    this.spec = spec;
  }

  /** A request arriving at `nowMs`: served after `waitMs` (its service included), or rejected now. */
  admit(nowMs: number): Admission {
    const serviceMs = 1000 / this.spec.ratePerS;
    const start = Math.max(nowMs, this.#freeAt);
    const waiting = (start - nowMs) / serviceMs;
    if (waiting > (this.spec.queueBound ?? Infinity)) {
      this.counters.rejected++;
      return {
        kind: 'reject',
        status: this.spec.rejectStatus ?? 429,
        ...(this.spec.retryAfterS !== undefined ? { retryAfterS: this.spec.retryAfterS } : {}),
      };
    }
    this.#freeAt = start + serviceMs;
    const waitMs = this.#freeAt - nowMs;
    this.counters.served++;
    if (waitMs > this.counters.maxWaitMs) this.counters.maxWaitMs = waitMs;
    return { kind: 'serve', waitMs };
  }
}
