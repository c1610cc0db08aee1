import type { FixSink, RecordedFix, VehicleEvent } from '../../fix/fix.js';
import { eventIdBytes, vehicleEventIdBytes } from '../event-id.js';
import type { FullDisk } from '../full-disk.js';
import type { FileRoom, OutboxBound } from './bound.js';
import { CommitHealth, errInfo } from './commit-health.js';
import { DeadLetterQueue } from './dead-letter-queue.js';
import { DataVersion } from './data-version.js';
import { DeleteSchedule } from './delete-schedule.js';
import { outboxBound, outboxFullDisk, type OutboxOptions } from './options.js';
import { committedAfter, oldestCommittedTime } from './pages.js';
import { fromRow, indexOfSeq, seqRuns, toRow, type OutboxRow } from './row.js';
import type { QueueEntry } from '../../upload/upload-queue.js';
import { prepareOutboxStatements, type OutboxStatements } from './statements.js';
import type { OutboxCommitState, OutboxStatus } from './status.js';
import { thinOldest } from './thinning.js';
import { COUNTER, OutboxCounters } from './counters.js';
import { FULL_DISK_CHUNK, capAtSize, fileRoom, lift, thinHeld } from './while-full.js';
import { isDiskFull } from '../../errors.js';
import { eventIdKey, seqsOfEventIds, undelivered, type CarriedFixes } from '../carried-fixes.js';

export type { OutboxOptions } from './options.js';
export type { LastDeadLetter, OutboxCommitState, OutboxStatus } from './status.js';
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
  readonly #o: OutboxOptions;
  readonly #counters: OutboxCounters;
  #buffer: OutboxRow[] = [];
  readonly #delivered = new Set<number>();
  readonly #dead = new DeadLetterQueue();
  #committedCount = 0;
  #nextSeq = 1;
  #lastFixTime: number | undefined;
  /** The newest committed row, cached: the live lane asks for it before every request. null = none; undefined = unknown. */
  #newestCommitted: OutboxRow | null | undefined;
  #timer: NodeJS.Timeout | undefined;
  readonly #bound: OutboxBound;
  readonly #health: CommitHealth;
  readonly #fullDisk: FullDisk;
  /** max_page_count at start, restored when a full disk has room again. */
  #pageLimit: number | undefined;
  readonly #deletes: DeleteSchedule;
  #stopped = true;
  readonly #listeners: (() => void)[] = [];
  #st!: OutboxStatements;
  /** Written inside the next commit's transaction, with the vehicle event that asked (recordEvent). */
  #withCommit: (() => void)[] = [];
  readonly #dataVersion = new DataVersion();
  #externalChanges = 0;

  constructor(options: OutboxOptions) {
    this.#o = options;
    this.#counters = new OutboxCounters(options.meta, options.clock, options.persistWithCounters);
    this.#health = new CommitHealth(options.clock, options.logger);
    this.#deletes = new DeleteSchedule(options.clock);
    this.#bound = outboxBound(options);
    this.#fullDisk = outboxFullDisk(options);
  }

  async start(): Promise<void> {
    const db = this.#o.db;
    this.#st = prepareOutboxStatements(db);
    this.#dataVersion.read(db);
    this.#dead.open(db);
    const stats = db.prepare<[], { n: number; maxSeq: number | null }>('SELECT count(*) AS n, max(seq) AS maxSeq FROM outbox').get()!;
    this.#committedCount = stats.n;
    this.#nextSeq = (stats.maxSeq ?? 0) + 1;
    this.#counters.load(this.#dead.count());
    this.#pageLimit = db.pragma('max_page_count', { simple: true }) as number;
    this.#stopped = false;
    this.#timer = setInterval(() => this.flush(), this.#o.storage.commitIntervalMs);
    this.#timer.unref();
  }

  /** Commits what is buffered; the database stays the caller's to close. */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    this.flush({ final: true });
    this.#stopped = true;
    // The last chance failed (a read-only card, a broken one): said every time, whatever the log throttle let through before.
    const dropped = this.#buffer.length;
    if (dropped > 0)
      this.#o.logger.error(
        { dropped, err: this.#health.lastError },
        'outbox stopped with fixes the database did not take (the final commit failed): they are lost',
      );
  }

  /**
   * The database goes away (damaged, a read-only card's copy, a recovery): stop writing to it and
   * hand over what only memory knows, the fixes not committed yet and the deliveries since the last
   * delete, by event id (carried-fixes.ts). Answers that land later are the store handle's to carry.
   */
  release(): CarriedFixes {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#stopped = true;
    const held = this.#buffer;
    this.#buffer = [];
    const delivered = new Set<string>();
    for (const seq of this.#delivered) {
      try {
        const id = this.#st.eventId.get(seq)?.event_id;
        if (id) delivered.add(eventIdKey(id));
      } catch {
        // The database is unreadable: that fix is sent again, under its own id.
      }
    }
    return { held, delivered };
  }

  /** The state writes of vehicle events not committed yet (a released outbox's, for the next one). */
  takeCommitWith(): (() => void)[] {
    return this.#withCommit.splice(0);
  }

  /** A state write for the next commit (an event's, released uncommitted by an earlier outbox). */
  commitWith(persist: () => void): void {
    if (this.#stopped) return;
    this.#withCommit.push(persist);
  }

  /**
   * What a released outbox held (a recovery that fell back to the read-only copy): its fixes are
   * held here again, after this outbox's own, renumbered, with their event ids; the rows of this
   * database it saw delivered are deleted at the next commit.
   */
  hold(carry: CarriedFixes): void {
    this.deliveredByEventId(carry.delivered, { count: false });
    const held = undelivered(carry).map((r) => ({ ...r, seq: this.#nextSeq++ }));
    this.#buffer = [...this.#buffer, ...held];
    for (const l of this.#listeners) l();
  }

  /**
   * Deliveries named by event id (keys of carried-fixes.ts eventIdKey): answers to entries an
   * earlier database handed out, whose seqs mean nothing here. `count`: they were not counted yet.
   */
  deliveredByEventId(ids: ReadonlySet<string>, options: { count: boolean }): void {
    if (ids.size === 0) return;
    const before = this.#buffer.length;
    this.#buffer = this.#buffer.filter((r) => !ids.has(eventIdKey(r.event_id)));
    let found = before - this.#buffer.length;
    try {
      for (const seq of seqsOfEventIds(this.#o.db, ids)) {
        if (this.#delivered.has(seq) || this.#dead.has(seq)) continue;
        this.#delivered.add(seq);
        found++;
      }
    } catch (e) {
      this.#o.logger.warn({ err: errInfo(e) }, 'deliveries by event id could not be matched with the stored fixes: they are sent again');
    }
    if (options.count) for (let i = 0; i < found; i++) this.#counters.sent(this.#o.clock.wallMs());
  }

  /** This database's seq of an event id, if it still queues it (a dead letter an earlier database handed out). */
  seqOfEventId(id: string): number | undefined {
    const held = this.#buffer.find((r) => eventIdKey(r.event_id) === id);
    if (held) return held.seq;
    try {
      return seqsOfEventIds(this.#o.db, new Set([id])).find((seq) => !this.#gone(seq));
    } catch {
      return undefined;
    }
  }

  /**
   * How often another process changed the outbox while this one runs (requeued dead letters): the
   * uploader's lanes start their backlog over when it moves, so the requeued fixes are met.
   */
  externalChanges(): number {
    return this.#externalChanges;
  }

  /** Called whenever a fix was recorded or committed (the uploader's wake-up). */
  onChange(listener: () => void): void {
    this.#listeners.push(listener);
  }

  record(fix: RecordedFix): void {
    if (this.#stopped) return;
    // The same GNSS second twice (a receiver repeating an epoch) would be the same event id.
    if (fix.time === this.#lastFixTime) return;
    const row = toRow(this.#nextSeq, eventIdBytes(this.#o.identity.externalSystemId, this.#o.identity.externalDeviceId, fix.time), fix);
    if (!row) {
      this.#counters.add(COUNTER.noPosition);
      return;
    }
    this.#nextSeq++;
    this.#lastFixTime = fix.time;
    this.#buffer.push(row);
    // After a failed commit only the timer retries, not every new fix.
    if (this.#buffer.length >= this.#o.storage.commitMaxFixes && !this.#health.lastError) this.flush();
    this.#notify();
  }

  /**
   * A movement or engine event (src/motion/), committed at once with `persist` (the motion state) in
   * the same transaction: a power cut leaves both or neither, so a restart never makes it twice.
   */
  recordEvent(event: VehicleEvent, persist?: () => void): void {
    if (this.#stopped) return;
    const id = vehicleEventIdBytes(this.#o.identity.externalSystemId, this.#o.identity.externalDeviceId, event.eventType, event.time);
    const row = toRow(this.#nextSeq, id, event);
    if (!row) {
      this.#counters.add(COUNTER.noPosition);
      return;
    }
    this.#nextSeq++;
    this.#buffer.push(row);
    if (persist) this.#withCommit.push(persist);
    if (!this.#health.lastError) this.flush();
    this.#notify();
  }

  // ---- the uploader's side ------------------------------------------------------------------

  /** The newest fix not yet delivered (the live lane's candidate). */
  newest(): QueueEntry | undefined {
    const last = this.#buffer.at(-1);
    if (last) return fromRow(last);
    if (this.#newestCommitted === undefined) this.#newestCommitted = this.#st.newest.get() ?? null;
    const row = this.#newestCommitted;
    return row && !this.#gone(row.seq) ? fromRow(row) : undefined;
  }

  /** Up to `limit` undelivered fixes with seq > afterSeq, oldest first (committed, then buffered). */
  after(afterSeq: number, limit: number): QueueEntry[] {
    const out = committedAfter(this.#st.after, afterSeq, limit, (seq) => this.#gone(seq));
    for (const r of this.#buffer) {
      if (out.length >= limit) break;
      if (r.seq > afterSeq) out.push(fromRow(r));
    }
    return out.slice(0, limit);
  }

  /** The platform has this fix (2xx): forget it. */
  delivered(entry: Pick<QueueEntry, 'seq'>): void {
    this.#counters.sent(this.#o.clock.wallMs());
    const seq = entry.seq;
    const i = indexOfSeq(this.#buffer, seq);
    if (i >= 0) this.#buffer.splice(i, 1);
    else this.#delivered.add(seq);
  }

  /** The platform refused this fix for good (400): keep it aside with its answer. */
  deadLetter(entry: QueueEntry, status: number | undefined, error: string): void {
    if (this.#dead.has(entry.seq)) return;
    const i = indexOfSeq(this.#buffer, entry.seq);
    // A buffered fix was never committed: there is no outbox row to delete.
    const committed = i < 0;
    if (!committed) this.#buffer.splice(i, 1);
    this.#dead.add({ entry, committed, status, error: error.slice(0, 2000), at: this.#o.clock.wallMs() });
  }

  commitState(): OutboxCommitState {
    return {
      buffered: this.#buffer.length,
      bound: this.#bound.value,
      lowDisk: this.#bound.lowDisk,
      ...this.#health.state(),
      ...(this.#fullDisk.active ? { diskFull: { ...pick(this.#fullDisk.state().sinceWallMs) } } : {}),
    };
  }

  status(): OutboxStatus {
    const oldest = this.#oldestPendingTime();
    const s: OutboxStatus = { pending: this.pendingCount(), ...this.commitState(), ...this.#counters.snapshot() };
    if (this.#dead.last) s.lastDeadLetter = this.#dead.last;
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
    return this.#committedCount - this.#delivered.size - this.#dead.pendingCommitted() + this.#buffer.length;
  }

  // ---- committing ---------------------------------------------------------------------------

  /**
   * One transaction: delivered and dead-lettered fixes out, new ones in, the bound enforced.
   * `final`: write everything now, counters and delivered deletions included (stop, tests).
   */
  flush(options: { final?: boolean } = {}): void {
    if (this.#stopped) return;
    this.#noticeExternalChange();
    const full = this.#fullDisk.active;
    // On a full disk statfs is asked every commit: the moment there is room the bound and the file go back to normal.
    this.#bound.check(() => this.#room(), full);
    if (full && !this.#leaveFullDisk()) {
      this.#commitWhileFull(options.final === true);
      return;
    }
    // Online and idle most seconds: no transaction at all when there is nothing to write.
    const idle =
      this.#buffer.length === 0 &&
      this.#dead.pending.length === 0 &&
      this.#withCommit.length === 0 &&
      !(this.#delivered.size > 0 && this.#deletesDue(false));
    if (idle && !options.final && !this.#counters.duePersist()) return;
    const hadWork = this.#buffer.length > 0;
    try {
      this.#commit({ final: options.final === true, take: this.#buffer.length });
      this.#health.succeeded();
    } catch (e) {
      if (isDiskFull(e)) {
        this.#fullDisk.enter(errInfo(e));
        this.#commitWhileFull(options.final === true);
      } else {
        this.#health.failed(e, this.#buffer.length);
        this.#thinHeld(errInfo(e).code);
      }
      return;
    }
    if (hadWork) this.#notify();
  }

  /** Whether this commit deletes the delivered rows (delete-schedule.ts). */
  #deletesDue(force: boolean): boolean {
    const overBound = this.#committedCount + this.#buffer.length > this.#bound.value;
    return this.#deletes.due({ force, delivered: this.#delivered.size, overBound });
  }

  /** Commits the first `take` buffered fixes with the deliveries and dead letters due; `deleteAll` forces the delivered deletes. */
  #commit(o: { final: boolean; take: number; deleteAll?: boolean }): void {
    const buffer = this.#buffer.slice(0, o.take);
    const deleting = this.#deletesDue(o.final || o.deleteAll === true);
    const delivered = deleting ? [...this.#delivered] : [];
    const dead = this.#dead.pending;
    let inserted = 0;
    let deleted = 0;
    let thinned = 0;
    let afterCommit: (() => void) | undefined;
    const persist = this.#withCommit;
    this.#o.db.transaction(() => {
      for (const p of persist) p();
      // Deletes first: on a capped file the inserts reuse the pages they free.
      for (const [from, to] of seqRuns(delivered)) deleted += this.#st.delRange.run(from, to).changes;
      for (const d of dead) {
        if (d.committed) deleted += this.#st.del.run(d.entry.seq).changes;
        this.#dead.write(d);
      }
      for (const row of buffer) inserted += this.#st.insert.run(row).changes;
      const count = this.#committedCount + inserted - deleted;
      if (count > this.#bound.value) {
        // The configured bound thins a tenth ahead, so that a pass is not due every commit; the
        // lowered one (a short disk) takes only what is over it.
        const target = this.#bound.lowDisk ? this.#bound.value : Math.floor(this.#bound.value * 0.9);
        thinned = thinOldest(this.#o.db, count, { target });
        this.#o.meta.increment(COUNTER.thinned, thinned);
      }
      if (thinned > 0 || o.final || this.#counters.duePersist()) afterCommit = this.#counters.write();
    })();
    // Only after COMMIT: a rolled-back transaction leaves the memory state as it was.
    afterCommit?.();
    if (persist.length > 0) this.#withCommit = this.#withCommit.slice(persist.length);
    if (deleting) this.#deletes.deleted();
    this.#committedCount += inserted - deleted - thinned;
    if (buffer.length > 0) this.#newestCommitted = buffer[buffer.length - 1]!;
    else if (
      this.#newestCommitted &&
      (delivered.includes(this.#newestCommitted.seq) || dead.some((d) => d.entry.seq === this.#newestCommitted!.seq))
    )
      this.#newestCommitted = undefined;
    this.#buffer = this.#buffer.slice(buffer.length);
    for (const seq of delivered) this.#delivered.delete(seq);
    this.#dead.committed(dead.length);
    if (dead.length > 0) {
      this.#counters.setDeadLetters(this.#dead.count());
      this.#dead.loadLast();
    }
    if (thinned > 0) this.#counters.addSaved(COUNTER.thinned, thinned);
    if (thinned > 0)
      this.#o.logger.warn(
        { thinned, bound: this.#bound.value, pending: this.pendingCount() },
        'outbox at its bound: thinned the oldest backlog (every 3rd fix kept, transitions kept)',
      );
  }

  /**
   * The disk is full. The file is capped at its size (while-full.ts capAtSize). Delivered
   * rows go first, in a transaction of their own (they free pages without losing anything); then
   * new fixes in small transactions, as many as the freed pages take. The rest waits in memory.
   */
  #commitWhileFull(final: boolean): void {
    if (this.#fullDisk.takeCap()) {
      this.#counters.add(COUNTER.diskFull);
      capAtSize(this.#o.db);
    }
    const hadWork = this.#buffer.length > 0;
    let failure: unknown;
    try {
      if (this.#delivered.size > 0 || this.#dead.pending.length > 0 || final) this.#commit({ final, take: 0, deleteAll: true });
      while (this.#buffer.length > 0) this.#commit({ final: false, take: Math.min(FULL_DISK_CHUNK, this.#buffer.length) });
    } catch (e) {
      failure = e;
    }
    if (failure === undefined) this.#health.succeeded();
    else if (!isDiskFull(failure)) this.#health.failed(failure, this.#buffer.length);
    else if (this.#health.lastError?.code !== errInfo(failure).code) this.#health.failed(failure, this.#buffer.length);
    else this.#health.stillFailing();
    this.#thinHeld('disk full');
    if (hadWork) this.#notify();
  }

  /** Commits failing for any reason: what is held in memory stays under its bound (while-full.ts thinHeld). */
  #thinHeld(why: string): void {
    const { held, thinned } = thinHeld(this.#buffer, this.#o.logger, why);
    this.#buffer = held;
    if (thinned > 0) this.#counters.add(COUNTER.thinned, thinned);
  }

  /** statfs shows room: lift the file cap. Returns whether the disk is no longer full. */
  #leaveFullDisk(): boolean {
    if (!this.#fullDisk.checkRoom()) return false;
    lift(this.#o.db, this.#pageLimit);
    this.#bound.check(() => this.#room(), true);
    return true;
  }

  /** Fixes the file holds without growing and the bytes a row takes (while-full.ts). */
  #room(): FileRoom {
    return fileRoom(this.#o.db, this.#committedCount);
  }

  /**
   * Another connection committed (the `outbox` command requeued dead letters): recount what this
   * process keeps in memory about the tables and tell the uploader (data-version.ts).
   */
  #noticeExternalChange(): void {
    if (!this.#dataVersion.changed(this.#o.db)) return;
    const before = this.#committedCount;
    this.#committedCount = this.#st.count.get()!.n;
    this.#counters.setDeadLetters(this.#dead.count());
    this.#dead.loadLast();
    if (this.#committedCount !== before) {
      this.#externalChanges++;
      this.#o.logger.info(
        { rows: this.#committedCount - before },
        'outbox changed by another process (requeued dead letters): sending them',
      );
      this.#notify();
    }
  }

  /** The oldest committed fix not delivered nor dead-lettered in memory since the last commit. */
  #oldestPendingTime(): number | undefined {
    if (this.#delivered.size === 0 && this.#dead.size === 0) return this.#st.oldest.get()?.fix_time ?? this.#buffer[0]?.fix_time;
    return oldestCommittedTime(this.#st.after, (seq) => this.#gone(seq)) ?? this.#buffer[0]?.fix_time;
  }

  /** Delivered or dead-lettered since the last commit: its row is still there, but it is not pending. */
  #gone(seq: number): boolean {
    return this.#delivered.has(seq) || this.#dead.has(seq);
  }

  #notify(): void {
    for (const l of this.#listeners) l();
  }
}

function pick(sinceWallMs: number | undefined): { sinceWallMs?: number } {
  return sinceWallMs === undefined ? {} : { sinceWallMs };
}
