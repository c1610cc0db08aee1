import type { Clock } from '../system/clock.js';
import type { RouteName } from './faults.js';

/** Requests of one time bucket by kind, as the platform saw them. */
export interface TimelineBucket {
  /** Start of the bucket, ms since the timeline started (monotonic). */
  atMs: number;
  /** Answered 2xx per route (a grant, a refresh, an upsert, an accepted event ...). */
  ok: Record<RouteName, number>;
  /** Answered otherwise, or dropped, per route: each is a request that will be retried. */
  failed: Record<RouteName, number>;
}

export interface TimelineSnapshot {
  bucketMs: number;
  buckets: TimelineBucket[];
}

/** What a timeline listens to: PlatformSimulator.onRequest. */
export interface RequestSource {
  onRequest(listener: (route: RouteName, status: number | 'dropped') => void): () => void;
}

/**
 * Platform requests per kind per time bucket ("requests per second at the platform over
 * time", the outage and the recovery peak). Attached to a simulator from outside, so the simulator
 * itself stays as it is; in another process (bench:fleet) the snapshot goes over IPC.
 */
export class RequestTimeline {
  readonly #bucketMs: number;
  readonly #clock: Clock;
  readonly #startMs: number;
  readonly #buckets: TimelineBucket[] = [];
  readonly #detach: () => void;

  constructor(source: RequestSource, options: { bucketMs: number; clock: Clock }) {
    if (!(options.bucketMs > 0)) throw new RangeError('bucketMs must be > 0');
    this.#bucketMs = options.bucketMs;
    this.#clock = options.clock;
    this.#startMs = options.clock.monotonicMs();
    this.#detach = source.onRequest((route, status) => this.#count(route, status));
  }

  stop(): void {
    this.#detach();
  }

  snapshot(): TimelineSnapshot {
    return structuredClone({ bucketMs: this.#bucketMs, buckets: this.#buckets });
  }

  #count(route: RouteName, status: number | 'dropped'): void {
    const index = Math.floor((this.#clock.monotonicMs() - this.#startMs) / this.#bucketMs);
    while (this.#buckets.length <= index) this.#buckets.push(emptyBucket(this.#buckets.length * this.#bucketMs));
    const bucket = this.#buckets[index]!;
    const ok = typeof status === 'number' && status >= 200 && status < 300;
    (ok ? bucket.ok : bucket.failed)[route] += 1;
  }
}

function emptyBucket(atMs: number): TimelineBucket {
  const zero = (): Record<RouteName, number> => ({ 'auth.password': 0, 'auth.refresh': 0, devices: 0, events: 0, locations: 0 });
  return { atMs, ok: zero(), failed: zero() };
}
