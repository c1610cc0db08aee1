import type { Clock, Timers } from '../../src/system/clock.js';

/**
 * Simulated time for a thousand uploaders in one process (bench:fleet's drain scenarios): a clock
 * whose timers sit in a binary heap and fire when run() reaches them, one instant at a time, with
 * the promise continuations they cause run before the clock moves on. The agent's own code (the
 * Uploader, its lanes, the drain controller, the retry decision) runs unchanged on it.
 */
export class VirtualTime implements Clock, Timers {
  #now = 0;
  readonly #wall0: number;
  #seq = 0;
  readonly #heap: { at: number; seq: number; fn: () => void }[] = [];
  readonly #cancelled = new Set<number>();

  constructor(wallStartMs: number) {
    this.#wall0 = wallStartMs;
  }

  monotonicMs(): number {
    return this.#now;
  }

  wallMs(): number {
    return this.#wall0 + this.#now;
  }

  setTimeout(fn: () => void, ms: number): number {
    const t = { at: this.#now + Math.max(0, ms), seq: ++this.#seq, fn };
    this.#push(t);
    return t.seq;
  }

  clearTimeout(handle: unknown): void {
    if (typeof handle === 'number') this.#cancelled.add(handle);
  }

  /**
   * Fires every timer up to `untilMs`, letting promise chains settle after each instant. Timers
   * within `quantumMs` of each other fire as one instant (in order), so the continuations of
   * their promises run up to that much late: a thousand uploaders cost one event-loop turn per
   * instant, and 5 ms is far below the seconds the bench measures.
   */
  async run(untilMs: number, quantumMs = 5): Promise<void> {
    for (;;) {
      const top = this.#heap[0];
      if (!top || top.at > untilMs) break;
      const upTo = Math.min(untilMs, top.at + quantumMs);
      while (this.#heap[0] && this.#heap[0].at <= upTo) {
        const t = this.#pop()!;
        if (this.#cancelled.delete(t.seq)) continue;
        this.#now = Math.max(this.#now, t.at);
        t.fn();
      }
      // Continuations (the uploader awaiting an answer) run now, at this instant.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    this.#now = Math.max(this.#now, untilMs);
  }

  #push(t: { at: number; seq: number; fn: () => void }): void {
    const h = this.#heap;
    h.push(t);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (less(h[p]!, h[i]!)) break;
      [h[p], h[i]] = [h[i]!, h[p]!];
      i = p;
    }
  }

  #pop(): { at: number; seq: number; fn: () => void } | undefined {
    const h = this.#heap;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && less(h[l]!, h[m]!)) m = l;
        if (r < h.length && less(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[m], h[i]] = [h[i]!, h[m]!];
        i = m;
      }
    }
    return top;
  }
}

function less(a: { at: number; seq: number }, b: { at: number; seq: number }): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}
