/**
 * Paces the backlog lane (upload.backlogRatePerS; issue 15 "Recovery"): a token bucket refilled at
 * `ratePerS` on the monotonic clock, holding at most one second's worth (and at least one token),
 * so a recovering agent sends its backlog at a steady trickle instead of at upload.concurrency.
 * The live lane is not paced: the newest fix goes out at once. 0 means unpaced.
 *
 * Why per agent and not per fleet: every gateway alone cannot see the fleet, but a thousand of them
 * coming back from the same outage, each draining at `ratePerS`, add at most N x ratePerS to the
 * platform's steady load, which is what the default is chosen for (README "Fleet behaviour").
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
