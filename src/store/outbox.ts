import type { Database, Statement } from 'better-sqlite3';
import type { Config } from '../config/load.js';
import type { FixSink, RecordedFix } from '../gnss/fix.js';
import type { Logger } from '../log.js';
import type { Clock } from '../system/clock.js';
import { Ballast } from './ballast.js';
import { eventIdBytes } from './event-id.js';
import { FullDisk } from './full-disk.js';
import { OutboxBound } from './outbox-bound.js';
import type { MetaStore } from './meta.js';
import { ROW_COLUMNS, fromRow, seqRuns, toRow, type OutboxEntry, type OutboxRow } from './outbox-row.js';
import { thinArray, thinOldest } from './outbox-thinning.js';
import { COUNTER, OutboxCounters, type OutboxCounterSnapshot } from './outbox-counters.js';
import { isDiskFull } from './store-faults.js';

export type { OutboxEntry } from './outbox-row.js';

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
 *   is thinned (outbox-thinning.ts), as little as the bound asks, counted in status.
 * - A full disk (SQLITE_FULL/ENOSPC) is not a bound: the ballast goes (full-disk.ts), the file is
 *   capped at its size, delivered rows are deleted first and new fixes fill the pages they free;
 *   what does not fit waits in memory (MAX_BUFFER_WHILE_FULL) until there is room.
 */
export interface OutboxOptions {
  db: Database;
  meta: MetaStore;
  /** Identity the event ids are made from; known before registration (the device identity record). */
  identity: { externalSystemId: string; externalDeviceId: string };
  storage: Config['storage'];
  dataDir: string;
  clock: Clock;
  logger: Logger;
  /** Free bytes of the data directory's file system; injected by tests. */
  freeBytes?: (dir: string) => number;
  /** How often the free-disk floor is checked. */
  diskCheckIntervalMs?: number;
  /** The full-disk state shared with the other writers of this database (agent.ts); default one without ballast. */
  fullDisk?: FullDisk;
  /** Written with the minute's counters, in the same transaction (the platform data counter). */
  persistWithCounters?: (meta: MetaStore) => void;
}

/** The part of the status kept in memory: no database read (the watchdog asks every few seconds). */
export interface OutboxCommitState {
  /** Pending fixes not yet committed. */
  buffered: number;
  /** The bound in force: storage.maxFixes, lowered while the disk is short. */
  bound: number;
  lowDisk: boolean;
  lastCommitError?: { code: string; message: string };
  /** Monotonic ms of the first of the commits failing since the last success. */
  commitFailingSinceMonoMs?: number;
  /** The disk is full (SQLITE_FULL/ENOSPC seen, statfs has not shown room since). */
  diskFull?: { sinceWallMs?: number };
}

export interface OutboxStatus extends OutboxCounterSnapshot, OutboxCommitState {
  pending: number;
  /** The newest dead letter: when (wall ms), the platform's status and the reason. */
  lastDeadLetter?: LastDeadLetter;
  oldestPendingFixTime?: string;
  /** Newest fix time recorded minus the oldest pending one (GNSS time, independent of the host clock). */
  oldestPendingAgeMs?: number;
}

export interface LastDeadLetter {
  at: number;
  status?: number;
  reason: string;
}

/**
 * Dead letters are never deleted by the agent (issue 11.1: only the newest 1,000 were kept, and a
 * platform refusing everything turned a backlog into that many): they take disk space like the
 * backlog and are bounded by it, through the outbox bound (outbox-bound.ts) and the free-disk
 * floor. `telematics-agent outbox requeue-dead-letters` puts them back (outbox-dead-letters.ts).
 */
/**
 * Delivered rows are deleted in batches, not with every commit: a delete rewrites the pages it
 * touches just as an insert does, and online with fixes committed before their answer came, a
 * delete per second doubled the card's writes (bench:upload "online-after-commit"). A power cut
 * before the batch lands only means those fixes are sent again under the same event ids, which the
 * platform de-duplicates. Deletes are due after this long, or at this many, or at the bound.
 */
const DELETE_EVERY_MS = 30_000;
const DELETE_BATCH = 2_000;
/** Rows read at a time while looking for the oldest pending fix past the delivered ones. */
const OLDEST_SCAN_PAGE = 512;
/**
 * Fixes the outbox holds in memory while they cannot be committed: an hour at 10 Hz (about 6 MB of
 * objects). Past it the oldest half of what is held is thinned like the backlog (every 3rd kept,
 * transitions kept) and counted in `thinned`: memory is not a place to keep a day of fixes, and a
 * crash loses what is only there.
 */
export const MAX_BUFFER_WHILE_FULL = 36_000;
/** Rows per transaction while the disk is full: what fits goes in, the rest waits. */
const FULL_DISK_CHUNK = 64;

export class Outbox implements FixSink {
  readonly #o: OutboxOptions;
  readonly #counters: OutboxCounters;
  #buffer: OutboxRow[] = [];
  readonly #delivered = new Set<number>();
  /** Refused for good, to be moved to dead_letter by the next commit. */
  #dead: { entry: OutboxEntry; committed: boolean; status: number | undefined; error: string; at: number }[] = [];
  readonly #deadSeqs = new Set<number>();
  #committedCount = 0;
  #nextSeq = 1;
  #lastFixTime: number | undefined;
  /** The newest committed row, cached: the live lane asks for it before every request. null = none; undefined = unknown. */
  #newestCommitted: OutboxRow | null | undefined;
  #timer: NodeJS.Timeout | undefined;
  readonly #bound: OutboxBound;
  #lastCommitError: { code: string; message: string } | undefined;
  #commitFailingSince: number | undefined;
  readonly #fullDisk: FullDisk;
  /** max_page_count at start, restored when a full disk has room again. */
  #pageLimit: number | undefined;
  #lastDeleteMono = -Infinity;
  #stopped = true;
  readonly #listeners: (() => void)[] = [];
  #st!: {
    insert: Statement<OutboxRow>;
    del: Statement<[number]>;
    delRange: Statement<[number, number]>;
    newest: Statement<[], OutboxRow>;
    after: Statement<[number, number], OutboxRow>;
    oldest: Statement<[], { fix_time: number }>;
    deadInsert: Statement<[string, number, string, number | null, string, number]>;
    deadCount: Statement<[], { n: number }>;
    deadLast: Statement<[], { status: number | null; error: string; failed_at: number }>;
    count: Statement<[], { n: number }>;
  };
  #lastDead: LastDeadLetter | undefined;
  /** PRAGMA data_version: changes when another connection (the `outbox` command) committed. */
  #dataVersion = 0;
  #externalChanges = 0;

  constructor(options: OutboxOptions) {
    this.#o = options;
    this.#counters = new OutboxCounters(options.meta, options.clock, options.persistWithCounters);
    this.#bound = new OutboxBound({
      maxFixes: options.storage.maxFixes,
      minFreeBytes: options.storage.minFreeBytes,
      dataDir: options.dataDir,
      clock: options.clock,
      logger: options.logger,
      ...(options.freeBytes ? { freeBytes: options.freeBytes } : {}),
      ...(options.diskCheckIntervalMs !== undefined ? { checkIntervalMs: options.diskCheckIntervalMs } : {}),
    });
    this.#fullDisk =
      options.fullDisk ??
      new FullDisk({
        ballast: new Ballast({ dataDir: options.dataDir, bytes: 0, logger: options.logger }),
        dataDir: options.dataDir,
        clock: options.clock,
        logger: options.logger,
        ...(options.freeBytes ? { freeBytes: options.freeBytes } : {}),
      });
  }

  async start(): Promise<void> {
    const db = this.#o.db;
    this.#st = {
      insert: db.prepare(
        `INSERT INTO outbox (${ROW_COLUMNS}) VALUES (@seq, @event_id, @fix_time, @lat_e7, @lon_e7, @alt_cm, @speed_cms, @track_cdeg, @hdop_c, @sats, @flags)`,
      ),
      del: db.prepare('DELETE FROM outbox WHERE seq = ?'),
      delRange: db.prepare('DELETE FROM outbox WHERE seq BETWEEN ? AND ?'),
      newest: db.prepare(`SELECT ${ROW_COLUMNS} FROM outbox ORDER BY seq DESC LIMIT 1`),
      after: db.prepare(`SELECT ${ROW_COLUMNS} FROM outbox WHERE seq > ? ORDER BY seq LIMIT ?`),
      oldest: db.prepare('SELECT fix_time FROM outbox ORDER BY seq LIMIT 1'),
      // dead_letter numbers its own rows: outbox seqs may be reused once the outbox was empty.
      deadInsert: db.prepare('INSERT INTO dead_letter (event_id, fix_time, fix_json, status, error, failed_at) VALUES (?, ?, ?, ?, ?, ?)'),
      deadCount: db.prepare('SELECT count(*) AS n FROM dead_letter'),
      deadLast: db.prepare('SELECT status, error, failed_at FROM dead_letter ORDER BY seq DESC LIMIT 1'),
      count: db.prepare('SELECT count(*) AS n FROM outbox'),
    };
    this.#dataVersion = db.pragma('data_version', { simple: true }) as number;
    this.#loadLastDead();
    const stats = db.prepare<[], { n: number; maxSeq: number | null }>('SELECT count(*) AS n, max(seq) AS maxSeq FROM outbox').get()!;
    this.#committedCount = stats.n;
    this.#nextSeq = (stats.maxSeq ?? 0) + 1;
    this.#counters.load(this.#st.deadCount.get()!.n);
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
  }

  /**
   * The database is damaged: stop writing to it and hand over what only memory knows, the fixes
   * not committed yet and the committed ones delivered since the last delete (database.ts
   * replaceDamagedDatabase carries them into the fresh file).
   */
  release(): { held: OutboxRow[]; delivered: Set<number> } {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#stopped = true;
    // The live set: answers to requests still in flight land in it until the uploader has stopped.
    const out = { held: this.#buffer, delivered: this.#delivered };
    this.#buffer = [];
    return out;
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
    if (this.#buffer.length >= this.#o.storage.commitMaxFixes && !this.#lastCommitError) this.flush();
    this.#notify();
  }

  // ---- the uploader's side ------------------------------------------------------------------

  /** The newest fix not yet delivered (the live lane's candidate). */
  newest(): OutboxEntry | undefined {
    const last = this.#buffer.at(-1);
    if (last) return fromRow(last);
    if (this.#newestCommitted === undefined) this.#newestCommitted = this.#st.newest.get() ?? null;
    const row = this.#newestCommitted;
    return row && !this.#delivered.has(row.seq) && !this.#deadSeqs.has(row.seq) ? fromRow(row) : undefined;
  }

  /** Up to `limit` undelivered fixes with seq > afterSeq, oldest first (committed, then buffered). */
  after(afterSeq: number, limit: number): OutboxEntry[] {
    const out: OutboxEntry[] = [];
    let cursor = afterSeq;
    while (out.length < limit) {
      const rows = this.#st.after.all(cursor, limit);
      for (const r of rows) if (!this.#delivered.has(r.seq) && !this.#deadSeqs.has(r.seq)) out.push(fromRow(r));
      if (rows.length < limit) break;
      cursor = rows[rows.length - 1]!.seq;
    }
    for (const r of this.#buffer) {
      if (out.length >= limit) break;
      if (r.seq > afterSeq) out.push(fromRow(r));
    }
    return out.slice(0, limit);
  }

  /** The platform has this fix (2xx): forget it. */
  delivered(seq: number): void {
    this.#counters.sent(this.#o.clock.wallMs());
    const i = this.#bufferIndex(seq);
    if (i >= 0) this.#buffer.splice(i, 1);
    else this.#delivered.add(seq);
  }

  /** The platform refused this fix for good (400): keep it aside with its answer. */
  deadLetter(entry: OutboxEntry, status: number | undefined, error: string): void {
    if (this.#deadSeqs.has(entry.seq)) return;
    const i = this.#bufferIndex(entry.seq);
    // A buffered fix was never committed: there is no outbox row to delete.
    const committed = i < 0;
    if (!committed) this.#buffer.splice(i, 1);
    this.#dead.push({ entry, committed, status, error: error.slice(0, 2000), at: this.#o.clock.wallMs() });
    this.#deadSeqs.add(entry.seq);
  }

  commitState(): OutboxCommitState {
    return {
      buffered: this.#buffer.length,
      bound: this.#bound.value,
      lowDisk: this.#bound.lowDisk,
      ...(this.#lastCommitError ? { lastCommitError: this.#lastCommitError } : {}),
      ...(this.#commitFailingSince !== undefined ? { commitFailingSinceMonoMs: this.#commitFailingSince } : {}),
      ...(this.#fullDisk.active ? { diskFull: { ...pick(this.#fullDisk.state().sinceWallMs) } } : {}),
    };
  }

  status(): OutboxStatus {
    const oldest = this.#oldestPendingTime();
    const s: OutboxStatus = { pending: this.pendingCount(), ...this.commitState(), ...this.#counters.snapshot() };
    if (this.#lastDead) s.lastDeadLetter = this.#lastDead;
    if (oldest !== undefined) {
      s.oldestPendingFixTime = new Date(oldest).toISOString();
      if (this.#lastFixTime !== undefined) s.oldestPendingAgeMs = Math.max(0, this.#lastFixTime - oldest);
    }
    return s;
  }

  pendingCount(): number {
    const committedDead = this.#dead.filter((d) => d.committed).length;
    return this.#committedCount - this.#delivered.size - committedDead + this.#buffer.length;
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
    this.#bound.check(() => this.#fits(), full);
    if (full && !this.#leaveFullDisk()) {
      this.#commitWhileFull(options.final === true);
      return;
    }
    // Online and idle most seconds: no transaction at all when there is nothing to write.
    const idle = this.#buffer.length === 0 && this.#dead.length === 0 && !(this.#delivered.size > 0 && this.#deletesDue(false));
    if (idle && !options.final && !this.#counters.duePersist()) return;
    const hadWork = this.#buffer.length > 0;
    try {
      this.#commit({ final: options.final === true, take: this.#buffer.length });
      this.#committed();
    } catch (e) {
      if (isDiskFull(e)) {
        this.#fullDisk.enter(errInfo(e));
        this.#commitWhileFull(options.final === true);
      } else this.#noteCommitError(e);
      return;
    }
    if (hadWork) this.#notify();
  }

  /** Whether this commit deletes the delivered rows (see DELETE_EVERY_MS). */
  #deletesDue(force: boolean): boolean {
    return (
      force ||
      this.#delivered.size >= DELETE_BATCH ||
      this.#o.clock.monotonicMs() - this.#lastDeleteMono >= DELETE_EVERY_MS ||
      // Thinning must never count delivered rows: at the bound they go first.
      this.#committedCount + this.#buffer.length > this.#bound.value
    );
  }

  /** Commits the first `take` buffered fixes with the deliveries and dead letters due; `deleteAll` forces the delivered deletes. */
  #commit(o: { final: boolean; take: number; deleteAll?: boolean }): void {
    const buffer = this.#buffer.slice(0, o.take);
    const deleting = this.#deletesDue(o.final || o.deleteAll === true);
    const delivered = deleting ? [...this.#delivered] : [];
    const dead = this.#dead;
    let inserted = 0;
    let deleted = 0;
    let thinned = 0;
    let afterCommit: (() => void) | undefined;
    this.#o.db.transaction(() => {
      // Deletes first: on a capped file the inserts reuse the pages they free.
      for (const [from, to] of seqRuns(delivered)) deleted += this.#st.delRange.run(from, to).changes;
      for (const d of dead) {
        const e = d.entry;
        if (d.committed) deleted += this.#st.del.run(e.seq).changes;
        this.#st.deadInsert.run(e.eventId, e.time, JSON.stringify(e), d.status ?? null, d.error, d.at);
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
    if (deleting) this.#lastDeleteMono = this.#o.clock.monotonicMs();
    this.#committedCount += inserted - deleted - thinned;
    if (buffer.length > 0) this.#newestCommitted = buffer[buffer.length - 1]!;
    else if (
      this.#newestCommitted &&
      (delivered.includes(this.#newestCommitted.seq) || dead.some((d) => d.entry.seq === this.#newestCommitted!.seq))
    )
      this.#newestCommitted = undefined;
    this.#buffer = this.#buffer.slice(buffer.length);
    for (const seq of delivered) this.#delivered.delete(seq);
    this.#dead = this.#dead.slice(dead.length);
    for (const d of dead) this.#deadSeqs.delete(d.entry.seq);
    if (dead.length > 0) {
      this.#counters.setDeadLetters(this.#st.deadCount.get()!.n);
      this.#loadLastDead();
    }
    if (thinned > 0) this.#counters.addSaved(COUNTER.thinned, thinned);
    if (thinned > 0)
      this.#o.logger.warn(
        { thinned, bound: this.#bound.value, pending: this.pendingCount() },
        'outbox at its bound: thinned the oldest backlog (every 3rd fix kept, transitions kept)',
      );
  }

  /**
   * The disk is full. The file is capped at its size (max_page_count), so that what the ballast
   * freed goes to the WAL, not to more fixes; a checkpoint moves the WAL into the file. Delivered
   * rows go first, in a transaction of their own (they free pages without losing anything); then
   * new fixes in small transactions, as many as the freed pages take. The rest waits in memory.
   */
  #commitWhileFull(final: boolean): void {
    const db = this.#o.db;
    if (this.#fullDisk.takeCap()) {
      this.#counters.add(COUNTER.diskFull);
      try {
        db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
        db.pragma('wal_checkpoint(RESTART)');
      } catch {
        // a checkpoint that cannot run now runs with a later commit
      }
    }
    const hadWork = this.#buffer.length > 0;
    let failure: unknown;
    try {
      if (this.#delivered.size > 0 || this.#dead.length > 0 || final) this.#commit({ final, take: 0, deleteAll: true });
      while (this.#buffer.length > 0) this.#commit({ final: false, take: Math.min(FULL_DISK_CHUNK, this.#buffer.length) });
    } catch (e) {
      failure = e;
    }
    if (failure === undefined) this.#committed();
    else if (!isDiskFull(failure)) this.#noteCommitError(failure);
    else if (this.#lastCommitError?.code !== errInfo(failure).code) this.#noteCommitError(failure);
    else this.#commitFailingSince ??= this.#o.clock.monotonicMs();
    if (this.#buffer.length > MAX_BUFFER_WHILE_FULL) {
      const before = this.#buffer.length;
      this.#buffer = thinArray(this.#buffer, (r) => (r.flags & 1) !== 0);
      this.#counters.add(COUNTER.thinned, before - this.#buffer.length);
      this.#o.logger.warn(
        { thinned: before - this.#buffer.length, held: this.#buffer.length, limit: MAX_BUFFER_WHILE_FULL },
        'disk full for too long: thinned the oldest fixes held in memory (every 3rd kept, transitions kept)',
      );
    }
    if (hadWork) this.#notify();
  }

  /** statfs shows room: lift the file cap. Returns whether the disk is no longer full. */
  #leaveFullDisk(): boolean {
    if (!this.#fullDisk.checkRoom()) return false;
    try {
      if (this.#pageLimit !== undefined) this.#o.db.pragma(`max_page_count = ${this.#pageLimit}`);
    } catch {
      // the next full-disk episode caps again from whatever it is
    }
    this.#bound.check(() => this.#fits(), true);
    return true;
  }

  /** Fixes the file holds without growing: its rows, plus as many again per page as its free pages take. */
  #fits(): number {
    try {
      const pages = this.#o.db.pragma('page_count', { simple: true }) as number;
      const free = this.#o.db.pragma('freelist_count', { simple: true }) as number;
      return this.#committedCount + Math.floor((free * this.#committedCount) / Math.max(1, pages - free));
    } catch {
      return this.#committedCount;
    }
  }

  #committed(): void {
    this.#lastCommitError = undefined;
    this.#commitFailingSince = undefined;
  }

  #loadLastDead(): void {
    const r = this.#st.deadLast.get();
    this.#lastDead = r ? { at: r.failed_at, ...(r.status !== null ? { status: r.status } : {}), reason: r.error.slice(0, 300) } : undefined;
  }

  /**
   * Another connection committed (the `outbox` command requeued dead letters): recount what this
   * process keeps in memory about the tables and tell the uploader. One pragma per commit tick; it
   * reads the WAL index only.
   */
  #noticeExternalChange(): void {
    let version: number;
    try {
      version = this.#o.db.pragma('data_version', { simple: true }) as number;
    } catch {
      return;
    }
    if (version === this.#dataVersion) return;
    this.#dataVersion = version;
    const before = this.#committedCount;
    this.#committedCount = this.#st.count.get()!.n;
    this.#counters.setDeadLetters(this.#st.deadCount.get()!.n);
    this.#loadLastDead();
    if (this.#committedCount !== before) {
      this.#externalChanges++;
      this.#o.logger.info(
        { rows: this.#committedCount - before },
        'outbox changed by another process (requeued dead letters): sending them',
      );
      this.#notify();
    }
  }

  #noteCommitError(e: unknown): void {
    this.#lastCommitError = errInfo(e);
    this.#commitFailingSince ??= this.#o.clock.monotonicMs();
    this.#o.logger.error(
      { err: this.#lastCommitError, buffered: this.#buffer.length },
      'outbox commit failed; fixes stay buffered and the commit is retried',
    );
  }

  /** The oldest committed fix not delivered nor dead-lettered in memory since the last commit. */
  #oldestPendingTime(): number | undefined {
    if (this.#delivered.size === 0 && this.#deadSeqs.size === 0) return this.#st.oldest.get()?.fix_time ?? this.#buffer[0]?.fix_time;
    // Requeued dead letters take seqs below the others (outbox-dead-letters.ts): start below any.
    let cursor = Number.MIN_SAFE_INTEGER;
    for (;;) {
      const rows = this.#st.after.all(cursor, OLDEST_SCAN_PAGE);
      for (const r of rows) if (!this.#delivered.has(r.seq) && !this.#deadSeqs.has(r.seq)) return r.fix_time;
      if (rows.length < OLDEST_SCAN_PAGE) return this.#buffer[0]?.fix_time;
      cursor = rows[rows.length - 1]!.seq;
    }
  }

  #bufferIndex(seq: number): number {
    // Buffered seqs ascend: binary search.
    let lo = 0;
    let hi = this.#buffer.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const s = this.#buffer[mid]!.seq;
      if (s === seq) return mid;
      if (s < seq) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  #notify(): void {
    for (const l of this.#listeners) l();
  }
}

export { isDiskFull } from './store-faults.js';

function errInfo(e: unknown): { code: string; message: string } {
  const code = (e as { code?: unknown })?.code;
  return { code: typeof code === 'string' ? code : 'UNKNOWN', message: e instanceof Error ? e.message : String(e) };
}

function pick(sinceWallMs: number | undefined): { sinceWallMs?: number } {
  return sinceWallMs === undefined ? {} : { sinceWallMs };
}
