import { copyFileSync, existsSync, openSync, closeSync, readdirSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { sqliteBinding } from '../system/sqlite-binding.js';
import { LOW_DISK_META_KEY } from './outbox/bound.js';
import { ROW_COLUMNS, type OutboxRow } from './outbox/row.js';
import { isCorrupt } from '../errors.js';
import { eventIdKey } from './held.js';

/**
 * Salvage of a damaged database: every outbox and dead-letter row that can still be
 * read goes into the fresh database with its seq and event id, so that nothing is sent twice under
 * another id. Tokens, device identity and registration are not carried over: they are rebuilt (one
 * password grant, one registration upsert), which costs less than trusting a damaged token row.
 *
 * The technique is SQLite's own b-tree seek, not a page parser: each table is read by seq (rowid)
 * ranges, and a range that raises SQLITE_CORRUPT is split in two until the damaged part is a
 * single seq, so one bad page loses only its own rows. A damaged header (the first 100 bytes) is
 * rewritten on a work copy; the damaged file itself is kept unchanged for a person.
 *
 * The sqlite3 CLI's `.recover` does more (it parses pages directly) but is not on a gateway;
 * test/store/salvage.test.ts compares with it where it is installed.
 */
export interface SalvageCounts {
  /** Rows copied into the fresh database. */
  rows: number;
  /** Seqs between the first and last readable one that could not be read (about the rows lost). */
  unreadable: number;
  /** Rows read but not plausible (wrong id length, impossible position): left out. */
  invalid: number;
}

export interface SalvageFacts {
  /** Wall ms of the salvage. */
  at: number;
  /** Why: the SQLite code and message that showed the damage. */
  reason: string;
  /** Where the damaged file was moved. */
  movedTo: string;
  /** Whether the schema (page 1) could be read at all. */
  schemaReadable: boolean;
  outbox: SalvageCounts;
  deadLetters: SalvageCounts;
  /** Fixes the running agent held in memory, written after the salvaged ones. */
  carried?: number;
}

export const SALVAGE_META_KEY = 'store.salvage';
/** Damaged files kept beside the database for a person: the newest few, not one per crash for ever. */
export const KEEP_DAMAGED_FILES = 2;

/** Range reads per table at most: each damaged page costs about 2 x log2(span) of them. */
const MAX_RANGE_READS = 200_000;
const PAGE_SIZES = [1024, 4096, 512, 2048, 8192, 16384, 32768, 65536];

export interface SalvageOptions {
  /** Event ids (held.ts eventIdKey) delivered but not yet deleted (the running agent knew): not salvaged. */
  skipEventIds?: ReadonlySet<string>;
  /** Called between chunks (a salvage of a large file is seconds of synchronous work): the daemon feeds its watchdog. */
  onProgress?: () => void;
}

/** Copies what is readable of `damaged` into `fresh` (migrated, empty); returns the counts. */
export function salvageInto(
  damaged: string,
  fresh: Database,
  options: SalvageOptions = {},
): Pick<SalvageFacts, 'schemaReadable' | 'outbox' | 'deadLetters'> {
  const empty = (): SalvageCounts => ({ rows: 0, unreadable: 0, invalid: 0 });
  const result = { schemaReadable: false, outbox: empty(), deadLetters: empty() };
  const source = openReadable(damaged);
  if (!source) return result;
  try {
    result.schemaReadable = true;
    const tables = new Set(
      (source.db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name),
    );
    if (tables.has('outbox')) result.outbox = copyOutbox(source.db, fresh, options.skipEventIds ?? new Set(), options.onProgress);
    if (tables.has('dead_letter')) result.deadLetters = copyDeadLetters(source.db, fresh, options.onProgress);
    if (tables.has('meta')) {
      copyMeta(source.db, fresh, CARRIED_META_KEYS);
      copyMeta(source.db, fresh, metaKeysLike(source.db, VEHICLE_META_PREFIX));
    }
  } finally {
    source.close();
  }
  return result;
}

/**
 * Meta facts a fresh file must not forget: the outbox bound set below the free-disk floor
 * (outbox/bound.ts), or a salvage on a short disk would size it again from what is free now.
 */
const CARRIED_META_KEYS = [LOW_DISK_META_KEY];
/**
 * The vehicle's state (the motion tracker's record: odometer, engine hours, a stop in progress, and
 * the settings waiting for the daemon): a fresh file without it would start the odometer at 0.
 */
const VEHICLE_META_PREFIX = 'motion.';

/** The readable meta keys under a prefix (none when the meta table cannot be read). */
function metaKeysLike(src: Database, prefix: string): string[] {
  try {
    return (src.prepare('SELECT key FROM meta WHERE substr(key, 1, ?) = ?').all(prefix.length, prefix) as { key: string }[]).map(
      (r) => r.key,
    );
  } catch {
    return [];
  }
}

/** Copies the readable ones of `keys` from the damaged meta table; an unreadable one is left. */
function copyMeta(src: Database, dst: Database, keys: readonly string[]): void {
  const insert = dst.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)');
  for (const key of keys) {
    try {
      const row = src.prepare('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined;
      if (row) insert.run(key, row.value);
    } catch {
      // a damaged meta page: that fact is lost (the bound is sized again, the vehicle's state starts anew)
    }
  }
}

/** The damaged file opened read-only, through a work copy with a rebuilt header when its own is damaged. */
function openReadable(file: string): { db: Database; close(): void } | undefined {
  const tryOpen = (f: string): Database | undefined => {
    let db: Database | undefined;
    try {
      db = new BetterSqlite3(f, { nativeBinding: sqliteBinding(), readonly: true, fileMustExist: true });
      db.prepare('SELECT count(*) FROM sqlite_schema').get();
      return db;
    } catch {
      db?.close();
      return undefined;
    }
  };
  const db = tryOpen(file);
  if (db) return { db, close: () => db.close() };
  const work = `${file}.work`;
  const cleanup = (): void => {
    for (const s of ['', '-wal', '-shm', '-journal']) rmSync(work + s, { force: true });
  };
  try {
    cleanup();
    copyFileSync(file, work);
    if (existsSync(`${file}-wal`)) copyFileSync(`${file}-wal`, `${work}-wal`);
    for (const pageSize of PAGE_SIZES) {
      writeHeader(work, pageSize, existsSync(`${file}-wal`));
      const repaired = tryOpen(work);
      if (repaired)
        return {
          db: repaired,
          close: () => {
            repaired.close();
            cleanup();
          },
        };
    }
  } catch {
    // no room for a work copy, or unreadable: nothing to salvage
  }
  cleanup();
  return undefined;
}

/**
 * A valid 100-byte header (https://www.sqlite.org/fileformat2.html#the_database_header) for a file
 * of this agent: the database size is left for SQLite to take from the file size (change counter
 * and version-valid-for differ), the free list is declared empty (it is never read here).
 */
function writeHeader(file: string, pageSize: number, wal: boolean): void {
  const h = Buffer.alloc(100);
  h.write('SQLite format 3\0', 0, 'latin1');
  h.writeUInt16BE(pageSize === 65536 ? 1 : pageSize, 16);
  h[18] = wal ? 2 : 1;
  h[19] = wal ? 2 : 1;
  h[20] = 0;
  h[21] = 64;
  h[22] = 32;
  h[23] = 32;
  h.writeUInt32BE(1, 24); // change counter
  h.writeUInt32BE(0, 28); // size in pages: from the file size
  h.writeUInt32BE(1, 40); // schema cookie
  h.writeUInt32BE(4, 44); // schema format
  h.writeUInt32BE(1, 56); // UTF-8
  h.writeUInt32BE(0, 92); // version-valid-for != change counter
  h.writeUInt32BE(3_045_000, 96);
  const fd = openSync(file, 'r+');
  try {
    writeSync(fd, h, 0, 100, 0);
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads `[lo, hi]` of a rowid table with `read`, splitting the range where it raises corruption.
 * Returns the rows and how many seqs could not be read.
 */
export function readByRanges<T>(
  lo: number,
  hi: number,
  read: (lo: number, hi: number) => T[],
  budget = MAX_RANGE_READS,
): { rows: T[]; unreadable: number } {
  const rows: T[] = [];
  let unreadable = 0;
  const stack: [number, number][] = [[lo, hi]];
  while (stack.length > 0) {
    const [a, b] = stack.pop()!;
    // A damaged root page fails every seek: give up instead of bisecting a wide span seq by seq.
    if (budget-- <= 0) {
      unreadable += b - a + 1;
      continue;
    }
    try {
      for (const r of read(a, b)) rows.push(r);
    } catch (e) {
      if (!isCorrupt(e) && !isMisuse(e)) throw e;
      if (a === b) {
        unreadable++;
        continue;
      }
      const mid = Math.floor((a + b) / 2);
      // Higher half first on the stack: rows come out in ascending order.
      stack.push([mid + 1, b], [a, mid]);
    }
  }
  return { rows, unreadable };
}

/** The seq span of a table: its ends if readable, else a wide span the ranges narrow down. */
function span(db: Database, table: string): [number, number] {
  const end = (order: 'ASC' | 'DESC'): number | undefined => {
    try {
      return (db.prepare(`SELECT seq FROM ${table} ORDER BY seq ${order} LIMIT 1`).get() as { seq: number } | undefined)?.seq;
    } catch {
      return undefined;
    }
  };
  const lo = end('ASC');
  const hi = end('DESC');
  if (lo !== undefined && hi !== undefined) return [lo, hi];
  // An end page is damaged: search the whole positive range (the seeks skip empty ranges quickly).
  return [lo ?? 1, hi ?? 2 ** 40];
}

/**
 * Seqs per read when the table's ends are known: each chunk is read, checked and written before the
 * next, so memory holds one chunk (a whole 60 MiB outbox at once took 1.2 GB and overflowed the
 * stack), and a damaged page is bisected within its chunk, not across the table (43 s -> 5 s for
 * 1.1 million rows with three damaged pages, bench:salvage).
 */
const CHUNK_SEQS = 8192;
/** A span this wide is the search of a table whose end pages are damaged: read whole by ranges. */
const MAX_CHUNKED_SPAN = 2 ** 32;

/** Reads [lo, hi] chunk by chunk (readByRanges within each), handing each chunk's rows to `each`. */
function readChunked<T>(
  lo: number,
  hi: number,
  read: (lo: number, hi: number) => T[],
  each: (rows: T[]) => void,
  onProgress: (() => void) | undefined,
): { read: number; unreadable: number } {
  const step = hi - lo + 1 > MAX_CHUNKED_SPAN ? hi - lo + 1 : CHUNK_SEQS;
  let total = 0;
  let unreadable = 0;
  for (let a = lo; a <= hi; a += step) {
    const got = readByRanges(a, Math.min(hi, a + step - 1), read);
    total += got.rows.length;
    unreadable += got.unreadable;
    each(got.rows);
    onProgress?.();
  }
  return { read: total, unreadable };
}

/** Seqs in [lo, hi] with no row at all are not unreadable; corrupt single seqs in a gap are. */
function copyOutbox(src: Database, dst: Database, skip: ReadonlySet<string>, onProgress?: () => void): SalvageCounts {
  const [lo, hi] = span(src, 'outbox');
  const select = src.prepare(`SELECT ${ROW_COLUMNS} FROM outbox WHERE seq BETWEEN ? AND ? ORDER BY seq`);
  // One seq by equality: a range scan steps on to the next row, which may be on the damaged page.
  const one = src.prepare(`SELECT ${ROW_COLUMNS} FROM outbox WHERE seq = ?`);
  const insert = dst.prepare(
    `INSERT OR IGNORE INTO outbox (${ROW_COLUMNS}) VALUES (@seq, @event_id, @fix_time, @lat_e7, @lon_e7, @alt_cm, @speed_cms, @track_cdeg, @hdop_c, @sats, @flags)`,
  );
  let copied = 0;
  let invalid = 0;
  let got = { read: 0, unreadable: 0 };
  // One transaction: a fresh file holds all that was salvaged or nothing.
  dst.transaction(() => {
    got = readChunked(
      lo,
      hi,
      (a, b) => (a === b ? one.all(a) : select.all(a, b)) as OutboxRow[],
      (rows) => {
        for (const r of rows) {
          if (!plausibleRow(r)) {
            invalid++;
            continue;
          }
          if (skip.has(eventIdKey(r.event_id))) continue;
          copied += insert.run(r).changes;
        }
      },
      onProgress,
    );
  })();
  return { rows: copied, unreadable: boundedUnreadable(got.unreadable, hi - lo + 1 - got.read), invalid };
}

function copyDeadLetters(src: Database, dst: Database, onProgress?: () => void): SalvageCounts {
  const [lo, hi] = span(src, 'dead_letter');
  const cols = 'seq, event_id, fix_time, fix_json, status, error, failed_at';
  const select = src.prepare(`SELECT ${cols} FROM dead_letter WHERE seq BETWEEN ? AND ? ORDER BY seq`);
  const one = src.prepare(`SELECT ${cols} FROM dead_letter WHERE seq = ?`);
  const insert = dst.prepare(
    `INSERT OR IGNORE INTO dead_letter (${cols}) VALUES (@seq, @event_id, @fix_time, @fix_json, @status, @error, @failed_at)`,
  );
  let copied = 0;
  let invalid = 0;
  let got = { read: 0, unreadable: 0 };
  dst.transaction(() => {
    got = readChunked(
      lo,
      hi,
      (a, b) => (a === b ? one.all(a) : select.all(a, b)) as Record<string, unknown>[],
      (rows) => {
        for (const r of rows) {
          if (
            typeof r.event_id !== 'string' ||
            typeof r.fix_json !== 'string' ||
            typeof r.error !== 'string' ||
            !Number.isSafeInteger(r.fix_time)
          ) {
            invalid++;
            continue;
          }
          copied += insert.run(r).changes;
        }
      },
      onProgress,
    );
  })();
  return { rows: copied, unreadable: boundedUnreadable(got.unreadable, hi - lo + 1 - got.read), invalid };
}

/** A wide search span counts empty seqs too: never report more unreadable seqs than the span lacks. */
function boundedUnreadable(unreadable: number, missing: number): number {
  return Math.max(0, Math.min(unreadable, missing));
}

function plausibleRow(r: OutboxRow): boolean {
  return (
    Buffer.isBuffer(r.event_id) &&
    r.event_id.length === 16 &&
    Number.isSafeInteger(r.fix_time) &&
    Number.isSafeInteger(r.lat_e7) &&
    Math.abs(r.lat_e7) <= 900_000_000 &&
    Number.isSafeInteger(r.lon_e7) &&
    Math.abs(r.lon_e7) <= 1_800_000_000 &&
    Number.isSafeInteger(r.flags)
  );
}

function isMisuse(e: unknown): boolean {
  // A damaged record can also surface as "malformed" under other codes (e.g. a bad varint as SQLITE_ERROR).
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'string' && /^SQLITE_(ERROR|RANGE|MISMATCH|TOOBIG|FORMAT)/.test(code);
}

/** Deletes damaged files beyond the newest KEEP_DAMAGED_FILES (names carry their timestamp). */
export function pruneDamagedFiles(dataDir: string, base: string): string[] {
  const prefix = `${base}.corrupt-`;
  const stems = readdirSync(dataDir)
    .filter((n) => n.startsWith(prefix) && !/-(wal|shm|journal)$/.test(n) && !n.endsWith('.work'))
    .sort()
    .reverse();
  const removed: string[] = [];
  for (const stem of stems.slice(KEEP_DAMAGED_FILES)) {
    for (const s of ['', '-wal', '-shm']) rmSync(path.join(dataDir, stem + s), { force: true });
    removed.push(stem);
  }
  return removed;
}
