import type { FixSink, RecordedFix, StateSource, StateWrite, VehicleEvent } from '../../fix/fix.js';
import { eventIdBytes, vehicleEventIdBytes } from '../event-id.js';
import { hold, matchDelivered, seqOfEventId, takeHeld } from './held-rows.js';
import { OutboxCommitter } from './committer.js';
import { OutboxMemory } from './memory.js';
import type { OutboxOptions } from './options.js';
import { committedAfter, oldestCommittedTime } from './pages.js';
import { fromRow, indexOfSeq, toRow } from './row.js';
import type { QueueEntry } from '../../upload/upload-queue.js';
import { prepareOutboxStatements, type OutboxStatements } from './statements.js';
import type { OutboxCommitState, OutboxStatus } from './status.js';
import { COUNTER, OutboxCounters } from './counters.js';
import type { HeldFixes } from '../held.js';

export type { OutboxOptions } from './options.js';
export type { OutboxCommitState, OutboxStatus } from './status.js';
export { MAX_BUFFER_WHILE_FULL } from './while-full.js';

/**
 * The fix outbox: recorded fixes wait here, in SQLite, until the platform has them.
 *
 * - record() only appends to a memory buffer; flush() commits the buffer, the deliveries and the
 *   dead letters in one transaction every storage.commitIntervalMs or storage.commitMaxFixes
 *   (synchronous=FULL is set by openDatabase), so a power cut loses at most one interval and the SD
 *   card sees one small write a second, not one per sentence.
 * - A fix delivered before its batch was committed is never written at all: online, the outbox
 *   costs the card almost nothing.
 * - The event id is fixed at record time from the device identity and the GNSS fix time.
 * - Bounded by storage.maxFixes and the storage.minFreeBytes floor. Beyond it the oldest backlog
 *   is thinned (thinning.ts), as little as the bound asks, counted in status.
 * - A full disk (SQLITE_FULL/ENOSPC) is not a bound: the ballast goes (full-disk.ts), the file is
 *   capped at its size, delivered rows are deleted first and new fixes fill the pages they free;
 *   what does not fit waits in memory (MAX_BUFFER_WHILE_FULL) until there is room.
 */
export class Outbox implements FixSink {
  readonly #options: OutboxOptions;
  readonly #counters: OutboxCounters;
  /** The fixes not committed yet, the deliveries and dead letters since the last commit (memory.ts). */
  readonly #m = new OutboxMemory();
  readonly #committer: OutboxCommitter;
  #lastFixTime: number | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopped = true;
  readonly #listeners: (() => void)[] = [];
  #st!: OutboxStatements;

  constructor(options: OutboxOptions) {
    this.#options = options;
    this.#counters = new OutboxCounters(options.meta, options.clock, options.persistWithCounters);
    this.#committer = new OutboxCommitter(options, this.#m, this.#counters, () => this.#notify());
  }

  async start(): Promise<void> {
    const db = this.#options.db;
    this.#st = prepareOutboxStatements(db);
    this.#committer.open(this.#st);
    this.#m.dead.open(db);
    const stats = db.prepare<[], { n: number; maxSeq: number | null }>('SELECT count(*) AS n, max(seq) AS maxSeq FROM outbox').get()!;
    this.#m.committedCount = stats.n;
    this.#m.nextSeq = (stats.maxSeq ?? 0) + 1;
    this.#counters.load(this.#m.dead.count());
    this.#stopped = false;
    this.#timer = setInterval(() => this.flush(), this.#options.storage.commitIntervalMs);
    this.#timer.unref();
  }

  /** Commits what is buffered; the database stays the caller's to close. */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    this.flush({ final: true });
    this.#stopped = true;
    // The last chance failed (a read-only card, a broken one): said every time, whatever the log throttle let through before.
    const dropped = this.#m.buffer.length;
    if (dropped > 0)
      this.#options.logger.error(
        { dropped, err: this.#committer.lastError },
        'outbox stopped with fixes the database did not take (the final commit failed): they are lost',
      );
  }

  /**
   * The database goes away (damaged, a read-only card's copy, a recovery): stop writing to it and
   * give up what only memory knows, the fixes not committed yet and the deliveries since the last
   * delete, by event id (held.ts). Answers that land later are the store queue's to keep.
   */
  takeHeld(): HeldFixes {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#stopped = true;
    return takeHeld(this.#m, this.#st);
  }

  /** The state that changes between events, written with this outbox's commits when it is due. */
  setStateSource(source: StateSource | undefined): void {
    this.#m.stateSource = source;
  }

  /**
   * What an earlier outbox held (a recovery that fell back to the read-only copy): its fixes are
   * held here again, after this outbox's own, renumbered, with their event ids; the rows of this
   * database it saw delivered are deleted at the next commit.
   */
  hold(held: HeldFixes): void {
    this.deliveredByEventId(held.delivered, { count: false });
    hold(this.#m, held);
    for (const l of this.#listeners) l();
  }

  /**
   * Deliveries named by event id (keys of held.ts eventIdKey): answers to entries an
   * earlier database handed out, whose seqs mean nothing here. `count`: they were not counted yet.
   */
  deliveredByEventId(ids: ReadonlySet<string>, options: { count: boolean }): void {
    const found = matchDelivered(this.#m, this.#options.db, ids, this.#options.logger);
    if (options.count) for (let i = 0; i < found; i++) this.#counters.sent(this.#options.clock.wallMs());
  }

  /** This database's seq of an event id, if it still queues it (a dead letter an earlier database handed out). */
  seqOfEventId(id: string): number | undefined {
    return seqOfEventId(this.#m, this.#options.db, id);
  }

  /**
   * How often another process changed the outbox while this one runs (requeued dead letters): the
   * uploader's lanes start their backlog over when it moves, so the requeued fixes are met.
   */
  externalChanges(): number {
    return this.#committer.externalChanges;
  }

  /** Called whenever a fix was recorded or committed (the uploader's wake-up). */
  onChange(listener: () => void): void {
    this.#listeners.push(listener);
  }

  record(fix: RecordedFix): void {
    if (this.#stopped) return;
    // The same GNSS second twice (a receiver repeating an epoch) would be the same event id.
    if (fix.time === this.#lastFixTime) return;
    const row = toRow(
      this.#m.nextSeq,
      eventIdBytes(this.#options.identity.externalSystemId, this.#options.identity.externalDeviceId, fix.time),
      fix,
    );
    if (!row) {
      this.#counters.add(COUNTER.noPosition);
      return;
    }
    this.#m.nextSeq++;
    this.#lastFixTime = fix.time;
    this.#m.buffer.push(row);
    // After a failed commit only the timer retries, not every new fix.
    if (this.#m.buffer.length >= this.#options.storage.commitMaxFixes && !this.#committer.lastError) this.flush();
    this.#notify();
  }

  /**
   * A movement or engine event (src/motion/), committed at once with `state` (the motion state) in
   * the same transaction as its row, on every path (committer.ts): a power cut leaves both or
   * neither, so a restart never makes it twice nor loses it.
   */
  recordEvent(event: VehicleEvent, state?: StateWrite): void {
    if (this.#stopped) {
      this.#options.logger.warn({ eventType: event.eventType, time: event.time }, 'vehicle event after the outbox stopped: not queued');
      return;
    }
    const { externalSystemId, externalDeviceId } = this.#options.identity;
    const row = Number.isSafeInteger(event.time)
      ? toRow(this.#m.nextSeq, vehicleEventIdBytes(externalSystemId, externalDeviceId, event.eventType, event.time), event)
      : undefined;
    if (!row) {
      // Never in silence: the event is lost, so the log and status say it (its state still goes, so it is not made again).
      this.#counters.add(COUNTER.eventsRefused);
      this.#options.logger.warn(
        { eventType: event.eventType, time: event.time, lat: event.lat, lon: event.lon },
        'vehicle event refused by the outbox (no usable time or place): not sent',
      );
      if (state) this.#m.withCommit.push({ seq: undefined, write: state });
      return;
    }
    this.#m.nextSeq++;
    this.#m.buffer.push(row);
    if (state) this.#m.withCommit.push({ seq: row.seq, write: state });
    if (!this.#committer.lastError) this.flush();
    this.#notify();
  }

  // ---- the uploader's side ------------------------------------------------------------------

  /** The newest fix not yet delivered (the live lane's candidate). */
  newest(): QueueEntry | undefined {
    const last = this.#m.buffer.at(-1);
    if (last) return fromRow(last);
    if (this.#m.newestCommitted === undefined) this.#m.newestCommitted = this.#st.newest.get() ?? null;
    const row = this.#m.newestCommitted;
    return row && !this.#m.gone(row.seq) ? fromRow(row) : undefined;
  }

  /** Up to `limit` undelivered fixes with seq > afterSeq, oldest first (committed, then buffered). */
  after(afterSeq: number, limit: number): QueueEntry[] {
    const out = committedAfter(this.#st.after, afterSeq, limit, (seq) => this.#m.gone(seq));
    for (const r of this.#m.buffer) {
      if (out.length >= limit) break;
      if (r.seq > afterSeq) out.push(fromRow(r));
    }
    return out.slice(0, limit);
  }

  /** The platform has this fix (2xx): forget it. */
  delivered(entry: Pick<QueueEntry, 'seq'>): void {
    this.#counters.sent(this.#options.clock.wallMs());
    const seq = entry.seq;
    const i = indexOfSeq(this.#m.buffer, seq);
    if (i >= 0) this.#m.buffer.splice(i, 1);
    else this.#m.delivered.add(seq);
  }

  /** The platform refused this fix for good (400): keep it aside with its answer. */
  deadLetter(entry: QueueEntry, status: number | undefined, error: string): void {
    if (this.#m.dead.has(entry.seq)) return;
    const i = indexOfSeq(this.#m.buffer, entry.seq);
    // A buffered fix was never committed: there is no outbox row to delete.
    const committed = i < 0;
    if (!committed) this.#m.buffer.splice(i, 1);
    this.#m.dead.add({ entry, committed, status, error: error.slice(0, 2000), at: this.#options.clock.wallMs() });
  }

  commitState(): OutboxCommitState {
    return { buffered: this.#m.buffer.length, ...this.#committer.state() };
  }

  status(): OutboxStatus {
    const oldest = this.#oldestPendingTime();
    const s: OutboxStatus = { pending: this.pendingCount(), ...this.commitState(), ...this.#counters.snapshot() };
    if (this.#m.dead.last) s.lastDeadLetter = this.#m.dead.last;
    if (oldest !== undefined) {
      s.oldestPendingFixTime = new Date(oldest).toISOString();
      if (this.#lastFixTime !== undefined) s.oldestPendingAgeMs = Math.max(0, this.#lastFixTime - oldest);
    }
    return s;
  }

  /** GNSS ms between the oldest queued fix and the newest recorded one; 0 when nothing waits. */
  oldestPendingAgeMs(): number {
    const oldest = this.#oldestPendingTime();
    return oldest !== undefined && this.#lastFixTime !== undefined ? Math.max(0, this.#lastFixTime - oldest) : 0;
  }

  pendingCount(): number {
    return this.#m.pendingCount();
  }

  /**
   * One transaction: delivered and dead-lettered fixes out, new ones in, the bound enforced
   * (committer.ts). `final`: write everything now, counters and delivered deletions included (stop, tests).
   */
  flush(options: { final?: boolean } = {}): void {
    if (this.#stopped) return;
    this.#committer.flush(options.final === true);
  }

  /** The oldest committed fix not delivered nor dead-lettered in memory since the last commit. */
  #oldestPendingTime(): number | undefined {
    const m = this.#m;
    if (m.delivered.size === 0 && m.dead.size === 0) return this.#st.oldest.get()?.fix_time ?? m.buffer[0]?.fix_time;
    return oldestCommittedTime(this.#st.after, (seq) => m.gone(seq)) ?? m.buffer[0]?.fix_time;
  }

  #notify(): void {
    for (const l of this.#listeners) l();
  }
}
