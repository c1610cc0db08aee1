/**
 * upload.backlogMaxRatePerS, when set: a ceiling over the adaptive drain (drain-controller.ts), a
 * token bucket refilled at `ratePerS` on the monotonic clock, holding at most one second's worth
 * (and at least one token). The drain controller decides how many backlog requests go out; this
 * only caps their rate. The live lane is not paced: the newest fix goes out at once. 0 (the
 * default) means no ceiling. A file with the former upload.backlogRatePerS has it read as this
 * ceiling (config/load.ts).
 */
export class BacklogPacer {
  readonly #ratePerS: number;
  readonly #capacity: number;
  #tokens: number;
  #at: number;

  constructor(ratePerS: number, nowMs: number) {
    this.#ratePerS = ratePerS;
    this.#capacity = Math.max(1, ratePerS);
    // Start empty: a backlog found at start-up (or after an outage) begins at the paced rate.
    this.#tokens = 0;
    this.#at = nowMs;
  }

  get paced(): boolean {
    return this.#ratePerS > 0;
  }

  /** Takes one send if the bucket allows; else returns how many ms until it will (0: taken). */
  take(nowMs: number): number {
    if (!this.paced) return 0;
    this.#refill(nowMs);
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil(((1 - this.#tokens) / this.#ratePerS) * 1000));
  }

  /** A send taken but not made (nothing to send after all): the token goes back. */
  giveBack(): void {
    if (this.paced) this.#tokens = Math.min(this.#capacity, this.#tokens + 1);
  }

  #refill(nowMs: number): void {
    const elapsed = Math.max(0, nowMs - this.#at);
    this.#at = nowMs;
    this.#tokens = Math.min(this.#capacity, this.#tokens + (elapsed / 1000) * this.#ratePerS);
  }
}
