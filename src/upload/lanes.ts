import type { Config } from '../config/load.js';
import type { QueueEntry } from './upload-queue.js';
import type { UploadQueue } from './upload-queue.js';

export type Lane = 'live' | 'backlog';

/** Fixes read from the outbox per page of the backlog lane. */
const PAGE = 256;

/**
 * Which fix goes next (issue 5 "Two lanes"):
 * - live: the newest fix not yet covered by the backlog goes out at once (the map shows where the
 *   vehicle is now, even behind a week of backlog); one live request at a time;
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
  /** Requeued dead letters take seqs below the others (store/outbox/dead-letters.ts): start below any. */
  #cursor = Number.MIN_SAFE_INTEGER;
  #externalChanges = 0;
  #page: QueueEntry[] = [];
  #retry: QueueEntry[] = [];
  #lastLiveSeq = 0;
  #liveBusy = false;
  readonly #stats: Record<Lane, { sent: number; lastFixTime?: number }> = { live: { sent: 0 }, backlog: { sent: 0 } };

  constructor(queue: UploadQueue, order: Config['upload']['order']) {
    this.#queue = queue;
    this.#order = order;
  }

  /** `backlog` false: only the live lane may answer (the backlog pacer has no send left just now). */
  next(inFlight: (seq: number) => boolean, backlog = true): { entry: QueueEntry; lane: Lane } | undefined {
    const changes = this.#queue.externalChanges?.() ?? 0;
    if (changes !== this.#externalChanges) {
      // Another process put fixes back (requeued dead letters) below the cursor: start over. The
      // outbox answers only undelivered fixes, so nothing is offered twice.
      this.#externalChanges = changes;
      this.#cursor = Number.MIN_SAFE_INTEGER;
      this.#page = [];
      this.#retry = [];
    }
    if (this.#order === 'live-first' && !this.#liveBusy) {
      const newest = this.#queue.newest();
      if (newest && newest.seq > this.#cursor && newest.seq > this.#lastLiveSeq && !inFlight(newest.seq)) {
        this.#lastLiveSeq = newest.seq;
        this.#liveBusy = true;
        return { entry: newest, lane: 'live' };
      }
    }
    if (!backlog) return undefined;
    const entry = this.#nextBacklog(inFlight);
    return entry ? { entry, lane: 'backlog' } : undefined;
  }

  sent(lane: Lane, entry: QueueEntry): void {
    const s = this.#stats[lane];
    s.sent++;
    s.lastFixTime = entry.time;
    if (lane === 'live') this.#liveBusy = false;
  }

  /** Not delivered (failed or abandoned): it stays queued and is offered again. */
  requeue(entry: QueueEntry): void {
    if (entry.seq === this.#lastLiveSeq) {
      // The live lane tries the newest fix again (or a newer one): after an outage the map gets the
      // current position first, then the backlog drains behind it.
      this.#liveBusy = false;
      this.#lastLiveSeq = entry.seq - 1;
    }
    if (entry.seq > this.#cursor) return; // the live lane or the cursor will meet it
    const i = this.#retry.findIndex((e) => e.seq > entry.seq);
    if (this.#retry.some((e) => e.seq === entry.seq)) return;
    if (i < 0) this.#retry.push(entry);
    else this.#retry.splice(i, 0, entry);
  }

  /** A dead-lettered live fix frees the live lane too. */
  done(entry: QueueEntry): void {
    if (entry.seq === this.#lastLiveSeq) this.#liveBusy = false;
  }

  stats(lane: Lane): { sent: number; lastFixTime?: number } {
    return this.#stats[lane];
  }

  #nextBacklog(inFlight: (seq: number) => boolean): QueueEntry | undefined {
    const r = this.#retry.findIndex((e) => !inFlight(e.seq));
    if (r >= 0) return this.#retry.splice(r, 1)[0];
    for (;;) {
      if (this.#page.length === 0) {
        const page = this.#queue.after(this.#cursor, PAGE);
        if (page.length === 0) return undefined;
        this.#cursor = page.at(-1)!.seq;
        // A fix busy as the page is read (the live lane's newest, in flight or refused) is not the
        // backlog's: checked only when its turn came, it was sent again once delivered meanwhile.
        // If it comes back undelivered, requeue() puts it in `retry`, the cursor having passed it.
        this.#page = page.filter((e) => !inFlight(e.seq));
        if (this.#page.length === 0) continue;
      }
      const e = this.#page.shift()!;
      if (!inFlight(e.seq)) return e;
    }
  }
}
