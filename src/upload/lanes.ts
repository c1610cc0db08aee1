import type { Config } from '../config/load.js';
import type { QueueEntry, UploadQueue } from './upload-queue.js';

export type Lane = 'live' | 'backlog';

/** Fixes read from the outbox per page of the backlog lane. */
const PAGE = 256;

/**
 * A fix at most this much older (GNSS time) than the newest one is still live: a 10 Hz receiver
 * over a 300 ms link has several fixes of the last second in flight at once, and the
 * live lane sends them oldest first; anything older is the backlog's.
 */
export const LIVE_SPAN_MS = 5000;
/** Fixes after the last live one looked at for a live send. */
const LIVE_SCAN = 16;

/**
 * Which fix goes next (two lanes):
 * - live: the newest fix not yet covered by the backlog goes out at once (the map shows where the
 *   vehicle is now, even behind a week of backlog); with a live request still in flight, the next
 *   fixes of the last LIVE_SPAN_MS go too, oldest first (several live requests in flight);
 * - backlog: everything else, oldest first, paged from the outbox by a cursor over seq.
 * With upload.order "oldest-first" only the backlog lane runs.
 *
 * The live lane only takes fixes beyond the backlog cursor, and the backlog's pages only hold fixes
 * up to it that are not busy when the page is read, so no fix is in both. A failed fix the cursor
 * has passed goes to `retry` and is sent again before the cursor moves on; one the cursor has not
 * reached is simply met by it later.
 */
export class UploadLanes {
  readonly #queue: UploadQueue;
  readonly #order: Config['upload']['order'];
  readonly #onStartOver: (() => void) | undefined;
  /** Requeued dead letters take seqs below the others (store/outbox/dead-letters.ts): start below any. */
  #cursor = Number.MIN_SAFE_INTEGER;
  #externalChanges = 0;
  #page: QueueEntry[] = [];
  #retry: QueueEntry[] = [];
  #lastLiveSeq = 0;
  /** GNSS time of the fix at #lastLiveSeq. */
  #lastLiveTime: number | undefined;
  readonly #liveInFlight = new Set<number>();
  readonly #stats: Record<Lane, { sent: number; lastFixTime?: number }> = { live: { sent: 0 }, backlog: { sent: 0 } };

  /** `onStartOver`: told when a change of the queue made the lanes start over (uploader.ts). */
  constructor(queue: UploadQueue, order: Config['upload']['order'], onStartOver?: () => void) {
    this.#queue = queue;
    this.#order = order;
    this.#onStartOver = onStartOver;
  }

  /** Live fixes in flight. */
  get liveInFlight(): number {
    return this.#liveInFlight.size;
  }

  /** The live lane's next fix, if there is one (order live-first only). */
  nextLive(inFlight: (entry: QueueEntry) => boolean): QueueEntry | undefined {
    this.#checkExternal();
    if (this.#order !== 'live-first') return undefined;
    const newest = this.#queue.newest();
    if (!newest || newest.seq <= this.#cursor || newest.seq <= this.#lastLiveSeq) return undefined;
    let pick: QueueEntry | undefined = inFlight(newest) ? undefined : newest;
    if (this.#lastLiveTime !== undefined && this.#lastLiveTime >= newest.time - LIVE_SPAN_MS) {
      // The live lane is running (its last fix is recent): the recent fixes after it, oldest first.
      const from = Math.max(this.#lastLiveSeq, this.#cursor);
      const recent = this.#queue.after(from, LIVE_SCAN).find((e) => !inFlight(e) && e.time >= newest.time - LIVE_SPAN_MS);
      if (recent) pick = recent;
    }
    if (!pick) return undefined;
    if (pick.seq > this.#lastLiveSeq) {
      this.#lastLiveSeq = pick.seq;
      this.#lastLiveTime = pick.time;
    }
    this.#liveInFlight.add(pick.seq);
    return pick;
  }

  /** The backlog lane's next fix, oldest first, if there is one. */
  nextBacklog(inFlight: (entry: QueueEntry) => boolean): QueueEntry | undefined {
    this.#checkExternal();
    return this.#nextBacklog(inFlight);
  }

  #checkExternal(): void {
    const changes = this.#queue.externalChanges?.() ?? 0;
    if (changes !== this.#externalChanges) {
      // Another process put fixes back (requeued dead letters) below the cursor, or the store
      // swapped its database (seqs are per database): start over.
      this.#externalChanges = changes;
      this.startOver();
      this.#onStartOver?.();
    }
  }

  /** The backlog from its start again. The outbox answers only undelivered fixes, so nothing is offered twice. */
  startOver(): void {
    this.#cursor = Number.MIN_SAFE_INTEGER;
    this.#lastLiveSeq = Number.MIN_SAFE_INTEGER;
    this.#lastLiveTime = undefined;
    this.#page = [];
    this.#retry = [];
  }

  sent(lane: Lane, entry: QueueEntry): void {
    const s = this.#stats[lane];
    s.sent++;
    s.lastFixTime = entry.time;
    this.#liveInFlight.delete(entry.seq);
  }

  /** Not delivered (failed or abandoned): it stays queued and is offered again. */
  requeue(entry: QueueEntry): void {
    if (this.#liveInFlight.delete(entry.seq)) {
      // The live lane tries it again (or a newer one): after an outage the map gets the current
      // position first, then the backlog drains behind it.
      this.#lastLiveSeq = Math.min(this.#lastLiveSeq, entry.seq - 1);
    }
    if (entry.seq > this.#cursor) return; // the live lane or the cursor will meet it
    const i = this.#retry.findIndex((e) => e.seq > entry.seq);
    if (this.#retry.some((e) => e.seq === entry.seq)) return;
    if (i < 0) this.#retry.push(entry);
    else this.#retry.splice(i, 0, entry);
  }

  /** A dead-lettered live fix frees the live lane too. */
  done(entry: QueueEntry): void {
    this.#liveInFlight.delete(entry.seq);
  }

  stats(lane: Lane): { sent: number; lastFixTime?: number } {
    return this.#stats[lane];
  }

  #nextBacklog(inFlight: (entry: QueueEntry) => boolean): QueueEntry | undefined {
    const r = this.#retry.findIndex((e) => !inFlight(e));
    if (r >= 0) return this.#retry.splice(r, 1)[0];
    for (;;) {
      if (this.#page.length === 0) {
        const page = this.#queue.after(this.#cursor, PAGE);
        if (page.length === 0) return undefined;
        this.#cursor = page.at(-1)!.seq;
        // A fix busy as the page is read (the live lane's newest, in flight or refused) is not the
        // backlog's: checked only when its turn came, it was sent again once delivered meanwhile.
        // If it comes back undelivered, requeue() puts it in `retry`, the cursor having passed it.
        this.#page = page.filter((e) => !inFlight(e));
        if (this.#page.length === 0) continue;
      }
      const e = this.#page.shift()!;
      if (!inFlight(e)) return e;
    }
  }
}
