import { isDiskFull } from '../../errors.js';
import type { StateWrite } from '../../fix/fix.js';
import type { FullDisk } from '../full-disk.js';
import type { FileRoom, OutboxBound } from './bound.js';
import { CommitHealth, errInfo, type CommitError } from './commit-health.js';
import { COUNTER, type OutboxCounters } from './counters.js';
import { DataVersion } from './data-version.js';
import { DeleteSchedule } from './delete-schedule.js';
import type { OutboxMemory } from './memory.js';
import { outboxBound, outboxFullDisk, type OutboxOptions } from './options.js';
import { seqRuns } from './row.js';
import type { OutboxStatements } from './statements.js';
import type { OutboxCommitState } from './status.js';
import { thinOldest } from './thinning.js';
import { FULL_DISK_CHUNK, capAtSize, fileRoom, lift, thinHeld } from './while-full.js';

/**
 * The outbox's commits (outbox.ts flush): one transaction writes what memory holds (memory.ts) to
 * the tables, keeps the table under its bound (bound.ts, thinning.ts), and on a full disk falls back
 * to the capped file and small transactions (while-full.ts).
 */
export class OutboxCommitter {
  readonly #options: OutboxOptions;
  readonly #m: OutboxMemory;
  readonly #counters: OutboxCounters;
  readonly #notify: () => void;
  readonly #bound: OutboxBound;
  readonly #health: CommitHealth;
  readonly #fullDisk: FullDisk;
  /** max_page_count at start, restored when a full disk has room again. */
  #pageLimit: number | undefined;
  readonly #deletes: DeleteSchedule;
  #st!: OutboxStatements;
  readonly #dataVersion = new DataVersion();
  #externalChanges = 0;

  /** `notify`: the outbox's listeners, told when fixes were committed or another process changed the table. */
  constructor(options: OutboxOptions, memory: OutboxMemory, counters: OutboxCounters, notify: () => void) {
    this.#options = options;
    this.#m = memory;
    this.#counters = counters;
    this.#notify = notify;
    this.#health = new CommitHealth(options.clock, options.logger);
    this.#deletes = new DeleteSchedule(options.clock);
    this.#bound = outboxBound(options);
    this.#fullDisk = outboxFullDisk(options);
  }

  /** The outbox's start: its statements, and the database's data_version and page limit as they are. */
  open(st: OutboxStatements): void {
    this.#st = st;
    this.#dataVersion.read(this.#options.db);
    this.#pageLimit = this.#options.db.pragma('max_page_count', { simple: true }) as number;
  }

  /** The failure of the last commit, until one succeeds. */
  get lastError(): CommitError | undefined {
    return this.#health.lastError;
  }

  /** How often another process changed the outbox while this one runs (outbox.ts externalChanges). */
  get externalChanges(): number {
    return this.#externalChanges;
  }

  /** The commit side of OutboxCommitState (all of it but what memory buffers). */
  state(): Omit<OutboxCommitState, 'buffered'> {
    return {
      bound: this.#bound.value,
      lowDisk: this.#bound.lowDisk,
      ...this.#health.state(),
      ...(this.#fullDisk.active ? { diskFull: { ...pick(this.#fullDisk.state().sinceWallMs) } } : {}),
    };
  }

  /**
   * One transaction: delivered and dead-lettered fixes out, new ones in, the bound enforced.
   * `final`: write everything now, counters and delivered deletions included (stop, tests).
   */
  flush(final: boolean): void {
    const m = this.#m;
    this.#noticeExternalChange();
    const full = this.#fullDisk.active;
    // On a full disk statfs is asked every commit: the moment there is room the bound and the file go back to normal.
    this.#bound.check(() => this.#room(), full);
    if (full && !this.#leaveFullDisk()) {
      this.#commitWhileFull(final);
      return;
    }
    // Online and idle most seconds: no transaction at all when there is nothing to write.
    // The state source is asked once a flush: building its record is the tracker's work, not free.
    const busy =
      final ||
      m.buffer.length > 0 ||
      m.dead.pending.length > 0 ||
      m.withCommit.length > 0 ||
      (m.delivered.size > 0 && this.#deletesDue(false)) ||
      this.#counters.duePersist();
    const due = m.stateSource?.due(!busy);
    if (!busy && due === undefined) return;
    const hadWork = m.buffer.length > 0;
    try {
      this.#commit({ final, take: m.buffer.length, due });
      this.#health.succeeded();
    } catch (e) {
      if (isDiskFull(e)) {
        this.#fullDisk.enter(errInfo(e));
        this.#commitWhileFull(final);
      } else {
        this.#health.failed(e, m.buffer.length);
        this.#thinHeld(errInfo(e).code);
      }
      return;
    }
    if (hadWork) this.#notify();
  }

  /** Whether this commit deletes the delivered rows (delete-schedule.ts). */
  #deletesDue(force: boolean): boolean {
    const overBound = this.#m.committedCount + this.#m.buffer.length > this.#bound.value;
    return this.#deletes.due({ force, delivered: this.#m.delivered.size, overBound });
  }

  /** Commits the first `take` buffered fixes with the deliveries and dead letters due; `deleteAll` forces the delivered deletes. */
  #commit(o: { final: boolean; take: number; deleteAll?: boolean; due?: StateWrite | undefined }): void {
    const m = this.#m;
    const buffer = m.buffer.slice(0, o.take);
    const deleting = this.#deletesDue(o.final || o.deleteAll === true);
    const delivered = deleting ? [...m.delivered] : [];
    const dead = m.dead.pending;
    let inserted = 0;
    let deleted = 0;
    let thinned = 0;
    let afterCommit: (() => void) | undefined;
    const { writes, taken, fresh } = this.#stateWrites(o.take, o.due);
    this.#options.db.transaction(() => {
      for (const w of writes) this.#options.meta.setJson(w.key, w.value);
      // Deletes first: on a capped file the inserts reuse the pages they free.
      for (const [from, to] of seqRuns(delivered)) deleted += this.#st.delRange.run(from, to).changes;
      for (const d of dead) {
        if (d.committed) deleted += this.#st.del.run(d.entry.seq).changes;
        m.dead.write(d);
      }
      for (const row of buffer) inserted += this.#st.insert.run(row).changes;
      const count = m.committedCount + inserted - deleted;
      if (count > this.#bound.value) {
        // The configured bound thins a tenth ahead, so that a pass is not due every commit; the
        // lowered one (a short disk) takes only what is over it.
        const target = this.#bound.lowDisk ? this.#bound.value : Math.floor(this.#bound.value * 0.9);
        thinned = thinOldest(this.#options.db, count, { target });
        this.#options.meta.increment(COUNTER.thinned, thinned);
      }
      if (thinned > 0 || o.final || this.#counters.duePersist()) afterCommit = this.#counters.write();
    })();
    // Only after COMMIT: a rolled-back transaction leaves the memory state as it was.
    afterCommit?.();
    if (taken > 0) m.withCommit = m.withCommit.slice(taken);
    if (fresh) m.stateSource?.committed(fresh);
    if (deleting) this.#deletes.deleted();
    m.committedCount += inserted - deleted - thinned;
    if (buffer.length > 0) m.newestCommitted = buffer[buffer.length - 1]!;
    else if (m.newestCommitted && (delivered.includes(m.newestCommitted.seq) || dead.some((d) => d.entry.seq === m.newestCommitted!.seq)))
      m.newestCommitted = undefined;
    m.buffer = m.buffer.slice(buffer.length);
    for (const seq of delivered) m.delivered.delete(seq);
    m.dead.committed(dead.length);
    if (dead.length > 0) {
      this.#counters.setDeadLetters(m.dead.count());
      m.dead.loadLast();
    }
    if (thinned > 0) this.#counters.addSaved(COUNTER.thinned, thinned);
    if (thinned > 0)
      this.#options.logger.warn(
        { thinned, bound: this.#bound.value, pending: m.pendingCount() },
        'outbox at its bound: thinned the oldest backlog (every 3rd fix kept, transitions kept)',
      );
  }

  /**
   * The state writes this commit of the first `take` buffered rows may carry: a vehicle event's
   * state goes with its row or after it, never before (a full disk commits the buffer in chunks).
   * Once every event row is in, the state of the moment (the odometer since) rides along when due.
   */
  #stateWrites(take: number, due?: StateWrite): { writes: StateWrite[]; taken: number; fresh: StateWrite | undefined } {
    const m = this.#m;
    const firstLeft = m.buffer[take]?.seq ?? Infinity;
    let taken = 0;
    while (taken < m.withCommit.length && (m.withCommit[taken]!.seq ?? -Infinity) < firstLeft) taken++;
    const writes = m.withCommit.slice(0, taken).map((w) => w.write);
    const fresh = taken === m.withCommit.length ? (due ?? m.stateSource?.due()) : undefined;
    if (fresh) writes.push(fresh);
    return { writes, taken, fresh };
  }

  /**
   * The disk is full. The file is capped at its size (while-full.ts capAtSize). Delivered
   * rows go first, in a transaction of their own (they free pages without losing anything); then
   * new fixes in small transactions, as many as the freed pages take. The rest waits in memory.
   */
  #commitWhileFull(final: boolean): void {
    const m = this.#m;
    if (this.#fullDisk.takeCap()) {
      this.#counters.add(COUNTER.diskFull);
      capAtSize(this.#options.db);
    }
    const hadWork = m.buffer.length > 0;
    let failure: unknown;
    try {
      if (m.delivered.size > 0 || m.dead.pending.length > 0 || final) this.#commit({ final, take: 0, deleteAll: true });
      while (m.buffer.length > 0) this.#commit({ final: false, take: Math.min(FULL_DISK_CHUNK, m.buffer.length) });
    } catch (e) {
      failure = e;
    }
    if (failure === undefined) this.#health.succeeded();
    else if (!isDiskFull(failure)) this.#health.failed(failure, m.buffer.length);
    else if (this.#health.lastError?.code !== errInfo(failure).code) this.#health.failed(failure, m.buffer.length);
    else this.#health.stillFailing();
    this.#thinHeld('disk full');
    if (hadWork) this.#notify();
  }

  /** Commits failing for any reason: what is held in memory stays under its bound (while-full.ts thinHeld). */
  #thinHeld(why: string): void {
    const { held, thinned } = thinHeld(this.#m.buffer, this.#options.logger, why);
    this.#m.buffer = held;
    if (thinned > 0) this.#counters.add(COUNTER.thinned, thinned);
  }

  /** statfs shows room: lift the file cap. Returns whether the disk is no longer full. */
  #leaveFullDisk(): boolean {
    if (!this.#fullDisk.checkRoom()) return false;
    lift(this.#options.db, this.#pageLimit);
    this.#bound.check(() => this.#room(), true);
    return true;
  }

  /** Fixes the file holds without growing and the bytes a row takes (while-full.ts). */
  #room(): FileRoom {
    return fileRoom(this.#options.db, this.#m.committedCount);
  }

  /**
   * Another connection committed (the `outbox` command requeued dead letters): recount what this
   * process keeps in memory about the tables and tell the uploader (data-version.ts).
   */
  #noticeExternalChange(): void {
    if (!this.#dataVersion.changed(this.#options.db)) return;
    const m = this.#m;
    const before = m.committedCount;
    m.committedCount = this.#st.count.get()!.n;
    this.#counters.setDeadLetters(m.dead.count());
    m.dead.loadLast();
    if (m.committedCount !== before) {
      this.#externalChanges++;
      this.#options.logger.info(
        { rows: m.committedCount - before },
        'outbox changed by another process (requeued dead letters): sending them',
      );
      this.#notify();
    }
  }
}

function pick(sinceWallMs: number | undefined): { sinceWallMs?: number } {
  return sinceWallMs === undefined ? {} : { sinceWallMs };
}
