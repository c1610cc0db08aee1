import { setTimeout as sleep } from 'node:timers/promises';
import type { Lane } from './lanes.js';
import type { QueueEntry } from './upload-queue.js';

/** A request in flight; `sentAt`: when the exchange went out, after any wait for a token (monotonic ms). */
export type Flight = { lane: Lane; eventId: string; promise: Promise<void>; startedAt: number; limited: boolean; sentAt?: number };

/** The uploader's requests in flight, by seq, and the event ids a change of seqs left in flight. */
export class InFlightRequests {
  readonly #flights = new Map<number, Flight>();
  /** Ids in flight when the seqs changed (a swap): their fix under a new seq waits, then the lanes start over. */
  #staleIds = new Set<string>();

  get size(): number {
    return this.#flights.size;
  }

  has(seq: number): boolean {
    return this.#flights.has(seq);
  }

  get(seq: number): Flight | undefined {
    return this.#flights.get(seq);
  }

  set(seq: number, flight: Flight): void {
    this.#flights.set(seq, flight);
  }

  /** In flight under its seq before the seqs changed. */
  isStale(eventId: string): boolean {
    return this.#staleIds.has(eventId);
  }

  /** The seqs changed (the lanes started over after a swap): every id in flight now is stale. */
  renumbered(): void {
    this.#staleIds = new Set([...this.#flights.values()].map((f) => f.eventId));
  }

  /** The request of `entry` settled. Returns whether it was the last stale one: the lanes start over then. */
  settled(entry: QueueEntry): boolean {
    this.#flights.delete(entry.seq);
    return this.#staleIds.delete(entry.eventId) && this.#staleIds.size === 0;
  }

  onLane(lane: Lane): number {
    return [...this.#flights.values()].filter((f) => f.lane === lane).length;
  }

  /** When each went out (monotonic ms), undefined while it waits for a token. */
  sentAt(): (number | undefined)[] {
    return [...this.#flights.values()].map((f) => f.sentAt);
  }

  /** Gives the requests in flight `graceMs` to finish, then calls `abort` and waits for them to settle. */
  async finish(graceMs: number, abort: () => void): Promise<void> {
    const pending = [...this.#flights.values()].map((f) => f.promise);
    if (pending.length > 0) {
      const grace = new AbortController();
      await Promise.race([Promise.allSettled(pending), sleep(graceMs, undefined, { signal: grace.signal }).catch(() => undefined)]);
      grace.abort();
    }
    abort();
    await Promise.allSettled([...this.#flights.values()].map((f) => f.promise));
  }
}
