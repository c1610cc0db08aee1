import { PlatformError } from '../../src/errors.js';
import type { AuthorizedRequester, PlatformRequest, PlatformResponse } from '../../src/platform/contracts.js';
import { CapacityModel, type CapacitySpec } from '../../src/sim/capacity.js';
import type { QueueEntry, UploadQueue } from '../../src/upload/upload-queue.js';
import type { VirtualTime } from './virtual-time.js';

/**
 * The platform of bench:fleet's drain scenarios, in simulated time: the simulator's capacity model
 * (src/sim/capacity.ts: a FIFO queue served at a rate, 429/503 past a bound, or only slowing
 * down), a link of `rttMs` to each vehicle, an events outage that answers 503, and the agent's
 * request deadline. It keeps every event by id (duplicates counted) with its receipt time.
 */
export interface ModelPlatformOptions {
  capacity: CapacitySpec;
  rttMs: number;
  /** platform.requestTimeoutMs: an answer later than this is a timeout for the agent (the platform may still store the event). */
  requestTimeoutMs: number;
}

export class ModelPlatform {
  readonly #options: ModelPlatformOptions;
  readonly #time: VirtualTime;
  readonly capacity: CapacityModel;
  outage = false;
  /** Event id -> receipt (simulated ms) of its first delivery. */
  readonly received = new Map<string, number>();
  duplicates = 0;
  /** Served events per simulated second (index = second), and answers by status. */
  readonly servedPerSecond: number[] = [];
  readonly answers = new Map<number | 'timeout', number>();
  /** Longest queue wait per simulated minute, ms. */
  readonly maxWaitByMinute: number[] = [];

  constructor(o: ModelPlatformOptions, time: VirtualTime) {
    this.#options = o;
    this.#time = time;
    this.capacity = new CapacityModel(o.capacity);
  }

  requester(): AuthorizedRequester {
    return { send: (req) => this.#send(req) };
  }

  #count(k: number | 'timeout'): void {
    this.answers.set(k, (this.answers.get(k) ?? 0) + 1);
  }

  #send(req: PlatformRequest): Promise<PlatformResponse> {
    const t = this.#time;
    const half = this.#options.rttMs / 2;
    const sentAt = t.monotonicMs();
    const id = String((req.json as { id?: unknown }).id);
    return new Promise((resolve, reject) => {
      let settled = false;
      const deadline = t.setTimeout(() => {
        if (settled) return;
        settled = true;
        this.#count('timeout');
        reject(new PlatformError('PLATFORM_TIMEOUT', 'event upload: no answer in time', { class: 'transient' }));
      }, this.#options.requestTimeoutMs);
      const answer = (res: PlatformResponse, atMs: number): void => {
        t.setTimeout(() => {
          if (settled) return;
          settled = true;
          t.clearTimeout(deadline);
          this.#count(res.status);
          resolve(res);
        }, atMs - t.monotonicMs());
      };
      t.setTimeout(() => {
        const now = t.monotonicMs();
        if (this.outage) return answer(status(503), now + half);
        const a = this.capacity.admit(now);
        if (a.kind === 'reject') return answer(status(a.status, a.retryAfterS), now + half);
        const servedAt = now + a.waitMs;
        const minute = Math.floor(now / 60_000);
        this.maxWaitByMinute[minute] = Math.max(this.maxWaitByMinute[minute] ?? 0, a.waitMs);
        // FIFO: served in the order of arrival, so the receipt is known now (no timer for it).
        const sec = Math.floor(servedAt / 1000);
        this.servedPerSecond[sec] = (this.servedPerSecond[sec] ?? 0) + 1;
        if (this.received.has(id)) this.duplicates++;
        else this.received.set(id, servedAt);
        answer({ status: 200, headers: { 'content-type': 'application/json' }, body: {}, text: '{}' }, servedAt + half);
      }, half);
      void sentAt;
    });
  }
}

function status(code: number, retryAfterS?: number): PlatformResponse {
  return {
    status: code,
    headers: { 'content-type': 'application/json', ...(retryAfterS !== undefined ? { 'retry-after': String(retryAfterS) } : {}) },
    body: { status: code },
    text: `{"status":${code}}`,
  };
}

/** An outbox in memory (UploadQueue): what the uploader needs, nothing written anywhere. */
export class MemoryQueue implements UploadQueue {
  readonly #entries: QueueEntry[] = [];
  readonly #gone = new Set<number>();
  readonly #listeners: (() => void)[] = [];
  #seq = 0;
  #head = 0;
  pending = 0;

  record(fix: Omit<QueueEntry, 'seq' | 'transition'>): QueueEntry {
    const e: QueueEntry = { ...fix, seq: ++this.#seq, transition: false };
    this.#entries.push(e);
    this.pending++;
    for (const l of this.#listeners) l();
    return e;
  }

  newest(): QueueEntry | undefined {
    const e = this.#entries.at(-1);
    return e && !this.#gone.has(e.seq) ? e : undefined;
  }

  after(afterSeq: number, limit: number): QueueEntry[] {
    while (this.#head < this.#entries.length && this.#gone.has(this.#entries[this.#head]!.seq)) this.#head++;
    let lo = this.#head;
    let hi = this.#entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.#entries[mid]!.seq <= afterSeq) lo = mid + 1;
      else hi = mid;
    }
    const out: QueueEntry[] = [];
    for (let i = lo; i < this.#entries.length && out.length < limit; i++) {
      const e = this.#entries[i]!;
      if (!this.#gone.has(e.seq)) out.push(e);
    }
    return out;
  }

  delivered(entry: Pick<QueueEntry, 'seq'>): void {
    const seq = entry.seq;
    if (this.#gone.has(seq)) return;
    this.#gone.add(seq);
    this.pending--;
  }

  deadLetter(entry: QueueEntry): void {
    this.delivered(entry);
  }

  onChange(listener: () => void): void {
    this.#listeners.push(listener);
  }

  /** Undelivered fixes recorded before `timeMs` (GNSS). */
  pendingBefore(timeMs: number): number {
    let n = 0;
    for (let i = this.#head; i < this.#entries.length; i++) {
      const e = this.#entries[i]!;
      if (e.time >= timeMs) break;
      if (!this.#gone.has(e.seq)) n++;
    }
    return n;
  }
}
