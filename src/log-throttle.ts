/**
 * "Log once, then at a decaying rate", for a condition that repeats until it clears (a commit that
 * keeps failing, a platform that answers every event with an oversized body): the first occurrence
 * of a run is logged at once, a repeat only when the gap since the last logged one has passed, the
 * gap doubling each time (by default after 1 min, then 2, 4, ... up to once an hour). 7,200 failed
 * commits in 2 hours make 7 lines, not 7,200; a new run (reset()) is logged at once again.
 * Time is the caller's monotonic clock (ms).
 */
export class LogThrottle {
  readonly #firstGapMs: number;
  readonly #maxGapMs: number;
  #running = false;
  #repeats = 0;
  #gapMs: number;
  #nextAtMs = 0;

  constructor(options: { firstGapMs?: number; maxGapMs?: number } = {}) {
    this.#firstGapMs = options.firstGapMs ?? 60_000;
    this.#maxGapMs = options.maxGapMs ?? 3_600_000;
    this.#gapMs = this.#firstGapMs;
  }

  /** Occurrences after the first of the current run, logged or not. */
  get repeats(): number {
    return this.#repeats;
  }

  /** An occurrence at `nowMs`: whether to log it. */
  occurred(nowMs: number): boolean {
    if (!this.#running) {
      this.#running = true;
      this.#repeats = 0;
      this.#gapMs = this.#firstGapMs;
      this.#nextAtMs = nowMs + this.#gapMs;
      return true;
    }
    this.#repeats++;
    if (nowMs < this.#nextAtMs) return false;
    this.#gapMs = Math.min(this.#maxGapMs, this.#gapMs * 2);
    this.#nextAtMs = nowMs + this.#gapMs;
    return true;
  }

  /** The run is over (the condition cleared or changed): the next occurrence is logged at once. */
  reset(): void {
    this.#running = false;
    this.#repeats = 0;
  }
}
