import type { FixSink, RecordedFix, StateSource, StateWrite, VehicleEvent } from '../fix/fix.js';
import { MAX_HELD_HEAP_BYTES, WAITING_FIX_HEAP_BYTES } from '../fix/held-memory.js';
import type { Logger } from '../log.js';
import type { QueueEntry, UploadQueue } from '../upload/upload-queue.js';
import type { Outbox } from './outbox/outbox.js';

/**
 * Fixes and vehicle events that wait while no outbox is attached (between the close of one
 * database and the open of the next): the held-memory budget's bytes (16,384 fixes) as a guard.
 * Vehicle events are few and carry state, so they always wait.
 */
export const MAX_WAITING_FIXES = Math.floor(MAX_HELD_HEAP_BYTES / WAITING_FIX_HEAP_BYTES);

/**
 * Seqs are numbered per database: the queue hands them out tagged with the slot of the outbox that
 * numbered them, so an entry of an older database is never taken for a row of the newer one (a held
 * fix on an empty read-only copy is numbered from 1, like the file's first rows). 2^36 seqs a slot
 * (a 10 Hz receiver for a century), 2^16 slots reused in turn (a slot's entries are long settled by
 * the time it comes round again).
 */
const SLOT = 2 ** 36;
const SLOTS = 2 ** 16;

type Waiting = { fix: RecordedFix } | { event: VehicleEvent; state: StateWrite | undefined };

/** A QueueEntry's event id as held.ts keys it (lower-case hex of its 16 bytes). */
export function entryIdKey(entry: Pick<QueueEntry, 'eventId'>): string {
  return entry.eventId.replaceAll('-', '').toLowerCase();
}

/**
 * The outbox of the moment, as the uploader, the receiver and the motion tracker see it: built once,
 * they never learn that the database underneath was swapped (store-handle.ts). While paused,
 * fixes and events wait here and go to the next outbox first, in order (an event with its state
 * in that outbox's commit); the uploader is offered nothing; answers to entries of an older
 * database are matched by event id, never by seq.
 */
export class StoreQueue implements UploadQueue, FixSink {
  #outbox: Outbox | undefined;
  /** The outbox's slot: `base` is added to its seqs. */
  #base = 0;
  #generation = 0;
  readonly #waiting: Waiting[] = [];
  #waitingFixes = 0;
  #dropped = 0;
  /** Deliveries of an older database's entries while no outbox is attached, by event id. */
  readonly #pending = new Set<string>();
  readonly #listeners: (() => void)[] = [];
  /** Grows at each swap and each change another process made to the outbox: the lanes start over. */
  #changes = 0;
  #seenOutboxChanges = 0;
  readonly #logger: Pick<Logger, 'error'>;
  #stateSource: StateSource | undefined;

  constructor(logger: Pick<Logger, 'error'>) {
    this.#logger = logger;
  }

  /** How many outboxes were attached so far. */
  get generation(): number {
    return this.#generation;
  }

  /** Fixes and vehicle events waiting for the next outbox. */
  get waiting(): number {
    return this.#waiting.filter((w) => 'fix' in w || 'event' in w).length;
  }

  /** Fixes that did not fit while no outbox took them. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Deliveries since the pause, by event id, for the outbox resumed next. */
  #takeDeliveries(): Set<string> {
    const ids = new Set(this.#pending);
    this.#pending.clear();
    return ids;
  }

  /**
   * The outbox of a new database: what waited goes to it first, in order; the lanes start their
   * backlog over (their cursor is a seq of the old one).
   */
  resume(outbox: Outbox): void {
    this.#generation++;
    this.#base = (this.#generation % SLOTS) * SLOT;
    this.#outbox = outbox;
    this.#seenOutboxChanges = outbox.externalChanges();
    this.#changes++;
    if (this.#pending.size > 0) outbox.deliveredByEventId(this.#takeDeliveries(), { count: true });
    if (this.#dropped > 0) {
      this.#logger.error(
        { dropped: this.#dropped, waiting: this.#waitingFixes, max: MAX_WAITING_FIXES },
        'fixes dropped while the store restarted: more than the queue holds waited for an outbox',
      );
      this.#dropped = 0;
    }
    for (const w of this.#waiting.splice(0)) {
      if ('fix' in w) outbox.record(w.fix);
      else outbox.recordEvent(w.event, w.state);
    }
    outbox.setStateSource(this.#stateSource);
    this.#waitingFixes = 0;
    outbox.onChange(() => {
      if (this.#outbox === outbox) this.#notify();
    });
    this.#notify();
  }

  /** From here fixes and events wait, and answers are kept by event id. */
  pause(): void {
    this.#outbox = undefined;
  }

  /** The state that changes between events (the motion tracker's): each outbox attached writes it with its commits. */
  setStateSource(source: StateSource | undefined): void {
    this.#stateSource = source;
    this.#outbox?.setStateSource(source);
  }

  record(fix: RecordedFix): void {
    if (this.#outbox) return this.#outbox.record(fix);
    if (this.#waitingFixes >= MAX_WAITING_FIXES) {
      this.#dropped++;
      return;
    }
    this.#waitingFixes++;
    this.#waiting.push({ fix });
  }

  /** A movement or engine event, committed with `state` in the same transaction (never dropped). */
  recordEvent(event: VehicleEvent, state?: StateWrite): void {
    if (this.#outbox) return this.#outbox.recordEvent(event, state);
    this.#waiting.push({ event, state });
  }

  newest(): QueueEntry | undefined {
    const e = this.#outbox?.newest();
    return e && this.#tag(e);
  }

  after(afterSeq: number, limit: number): QueueEntry[] {
    const outbox = this.#outbox;
    if (!outbox) return [];
    // A cursor from an older database's slot is before everything this one holds.
    const local = this.#ours(afterSeq) ? afterSeq - this.#base : Number.MIN_SAFE_INTEGER;
    return outbox.after(local, limit).map((e) => this.#tag(e));
  }

  delivered(entry: QueueEntry): void {
    const outbox = this.#outbox;
    if (outbox && this.#ours(entry.seq)) return outbox.delivered({ seq: entry.seq - this.#base });
    const id = entryIdKey(entry);
    if (outbox) outbox.deliveredByEventId(new Set([id]), { count: true });
    else this.#pending.add(id);
  }

  deadLetter(entry: QueueEntry, status: number | undefined, error: string): void {
    const outbox = this.#outbox;
    if (!outbox) return; // still queued in the database: sent again, refused again
    const seq = this.#ours(entry.seq) ? entry.seq - this.#base : outbox.seqOfEventId(entryIdKey(entry));
    if (seq !== undefined) outbox.deadLetter({ ...entry, seq }, status, error);
  }

  renumber(entry: QueueEntry): QueueEntry | undefined {
    const outbox = this.#outbox;
    if (!outbox) return undefined;
    if (this.#ours(entry.seq)) return entry;
    const seq = outbox.seqOfEventId(entryIdKey(entry));
    return seq === undefined ? undefined : { ...entry, seq: seq + this.#base };
  }

  onChange(listener: () => void): void {
    this.#listeners.push(listener);
  }

  externalChanges(): number {
    const n = this.#outbox?.externalChanges() ?? this.#seenOutboxChanges;
    if (n !== this.#seenOutboxChanges) {
      this.#seenOutboxChanges = n;
      this.#changes++;
    }
    return this.#changes;
  }

  #ours(seq: number): boolean {
    return Math.abs(seq - this.#base) < SLOT / 2;
  }

  #tag(e: QueueEntry): QueueEntry {
    return { ...e, seq: e.seq + this.#base };
  }

  #notify(): void {
    for (const l of this.#listeners) l();
  }
}
