/**
 * The status answer, built at most once per interval however many clients ask.
 *
 * Twenty local clients asking as fast as they could made the daemon build and serialise a fresh
 * snapshot (statfs of the data directory, the satellite table, the outbox counters) for each of
 * about 1,000 requests a second, and hold a copy of each in the socket that carried it: RSS 88 ->
 * 418 MB. One line per interval is shared by every answer in it; `status --watch` redraws once a
 * second, so half a second of staleness is never seen. Concurrent requests while a line is being
 * built wait for that one build.
 */
import { systemClock, type Clock } from '../system/clock.js';

/** What the socket answers `status` with; status/ supplies it (the socket carries it, it does not read it). */
export interface SnapshotProvider {
  snapshot(): unknown;
}

export class SnapshotLineCache {
  readonly #provider: SnapshotProvider;
  readonly #intervalMs: number;
  readonly #clock: Pick<Clock, 'monotonicMs'>;
  #line: { text: string; builtAtMs: number } | undefined;
  #building: Promise<string> | undefined;
  #builds = 0;

  constructor(provider: SnapshotProvider, intervalMs: number, clock: Pick<Clock, 'monotonicMs'> = systemClock) {
    this.#provider = provider;
    this.#intervalMs = intervalMs;
    this.#clock = clock;
  }

  /** Snapshots built so far (tests, and a figure for the log). */
  get builds(): number {
    return this.#builds;
  }

  /** The `{"status":...}` answer line, newline-terminated. Rejects when the provider throws (nothing is cached then). */
  line(): Promise<string> {
    const cached = this.#line;
    if (cached && this.#clock.monotonicMs() - cached.builtAtMs < this.#intervalMs) return Promise.resolve(cached.text);
    this.#building ??= this.#build().finally(() => {
      this.#building = undefined;
    });
    return this.#building;
  }

  async #build(): Promise<string> {
    this.#builds++;
    const snapshot = await this.#provider.snapshot();
    const text = `${JSON.stringify({ status: snapshot })}\n`;
    this.#line = { text, builtAtMs: this.#clock.monotonicMs() };
    return text;
  }
}
