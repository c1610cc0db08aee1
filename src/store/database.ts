import { chmodSync, closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { systemClock, type Clock } from '../system/clock.js';
import path from 'node:path';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { sqliteBinding } from '../system/sqlite-binding.js';
import { AgentError, isCorrupt } from '../errors.js';
import { giveToDataDirOwner, ownerAndMode } from '../system/data-owner.js';
import { ensureDataDir } from '../system/data-dir.js';

export { nearestReadOnly } from '../system/data-dir-fault.js';
export { ensureDataDir } from '../system/data-dir.js';
import type { Logger } from '../log.js';
import { MetaStore } from './meta.js';
import { migrate } from './migrations.js';
import { insertHeldRows, undelivered, writeHeldState, type HeldFixes } from './held.js';
import { pruneDamagedFiles, salvageInto, SALVAGE_META_KEY, type SalvageFacts } from './salvage.js';
import { guardDatabase, type StoreFaultListener } from './store-faults.js';

export type { Database } from 'better-sqlite3';

export const DATABASE_FILE = 'agent.db';

export interface OpenDatabaseOptions {
  dataDir: string;
  logger: Logger;
  /** Milliseconds to wait for another process's write lock before SQLITE_BUSY. */
  busyTimeoutMs?: number;
  /** Its wall clock stamps the damaged file's suffix and the salvage (default the system's). */
  clock?: Pick<Clock, 'wallMs'>;
  /** Told of every disk-full or corruption fault a statement of this database meets (store-faults.ts). */
  onFault?: StoreFaultListener;
  /** Called between the chunks of a salvage (seconds of synchronous work on a large file): the daemon feeds its watchdog. */
  onProgress?: () => void;
}

export function databasePath(dataDir: string): string {
  return path.join(dataDir, DATABASE_FILE);
}

/**
 * Opens `<dataDir>/agent.db`, creating the directory (0700) and the file (0600), sets the pragmas
 * every connection needs, and migrates the schema. A corrupt or garbage file is moved aside and
 * what is readable of it is salvaged into a fresh database (replaceDamagedDatabase), so the agent
 * never crash-loops on it and loses only the rows of the damaged pages.
 */
export function openDatabase(options: OpenDatabaseOptions): Database {
  ensureDataDir(options.dataDir);
  const file = databasePath(options.dataDir);
  // A salvage finished but was cut off before its file replaced agent.db: it is the database.
  if (!existsSync(file) && existsSync(salvagingPath(file))) moveFiles(salvagingPath(file), file);
  const notAFile = databaseNotAFile(options.dataDir);
  if (notAFile)
    throw new AgentError('DATABASE_NOT_A_FILE', `${notAFile.problem}: ${notAFile.fix}`, { class: 'config', details: { path: file } });
  try {
    return openAndMigrate(file, options);
  } catch (e) {
    if (!isCorrupt(e)) throw e;
    return replaceDamagedDatabase(options, describe(e));
  }
}

/**
 * agent.db is there but is no database file (a directory or a device: a bad image, a wrong copy):
 * a cause of its own, which no chown and no restart cures. The sentence to show, or undefined.
 */
export function databaseNotAFile(dataDir: string): { problem: string; fix: string } | undefined {
  const file = databasePath(dataDir);
  let st;
  try {
    st = statSync(file);
  } catch {
    return undefined;
  }
  if (st.isFile()) return undefined;
  return {
    problem: `${file} is ${st.isDirectory() ? 'a directory' : 'not a regular file'}, not the database file (a bad image or a wrong copy?)`,
    fix: `move it out of dataDir (mv ${file} ${file}.bad); the agent then creates a fresh database and stores what it holds in memory`,
  };
}

/**
 * The database file is damaged (found at open, or by any statement at run time): it is closed by
 * the caller, moved aside with a timestamp suffix, and what is readable of it is salvaged into a
 * fresh database (salvage.ts). The facts go into the fresh database's meta (status shows them for a
 * day) and to the log at error. Only the newest KEEP_DAMAGED_FILES damaged files are kept.
 */
export function replaceDamagedDatabase(options: OpenDatabaseOptions, reason: string, held?: HeldFixes): Database {
  const file = databasePath(options.dataDir);
  const now = new Date((options.clock ?? systemClock).wallMs());
  const aside = asideName(file, now);
  // Built beside the damaged file, which stays agent.db until the fresh one is whole: a power cut
  // or a kill during a long salvage leaves the damaged file to be salvaged again at the next start,
  // never an empty agent.db with the backlog in a file set aside for good.
  const fresh = salvagingPath(file);
  removeDatabaseFiles(fresh);
  const work = openAndMigrate(fresh, options);
  let facts: SalvageFacts;
  try {
    const counts = salvageInto(file, work, {
      ...(held ? { skipEventIds: held.delivered } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    });
    facts = { at: now.getTime(), reason, movedTo: aside, ...counts };
    const rows = held ? undelivered(held) : [];
    if (rows.length > 0) facts.carried = insertHeldRows(work, rows);
    // The fresh file replaces the damaged one whole (below): rows and their state arrive together.
    if (held) writeHeldState(work, held);
    new MetaStore(work).setJson(SALVAGE_META_KEY, facts);
  } finally {
    work.close();
  }
  moveFiles(file, aside);
  moveFiles(fresh, file);
  syncDir(options.dataDir);
  const db = openAndMigrate(file, options);
  const removed = pruneDamagedFiles(options.dataDir, DATABASE_FILE);
  options.logger.error(
    {
      reason,
      movedTo: aside,
      schemaReadable: facts.schemaReadable,
      outbox: facts.outbox,
      deadLetters: facts.deadLetters,
      carried: facts.carried ?? 0,
      removedOlderDamagedFiles: removed,
    },
    `database file is damaged (corrupt): moved it aside and salvaged ${facts.outbox.rows} queued fixes and ${facts.deadLetters.rows} dead letters into a fresh database (about ${facts.outbox.unreadable} unreadable); tokens and registration are obtained anew`,
  );
  return db;
}

/** Where a salvage builds the fresh database before it replaces the damaged one. */
export function salvagingPath(file: string): string {
  return `${file}.salvaging`;
}

function describe(e: unknown): string {
  const code = (e as { code?: unknown })?.code;
  const sqlite = (e as { sqliteCode?: unknown })?.sqliteCode;
  return `${typeof sqlite === 'string' ? sqlite : typeof code === 'string' ? code : 'UNKNOWN'}: ${e instanceof Error ? e.message : String(e)}`;
}

/** SQLite's and the system's ways of saying "this user may not open that file". */
const ACCESS_CODES = new Set([
  'EACCES',
  'EPERM',
  'EROFS',
  'SQLITE_CANTOPEN',
  'SQLITE_PERM',
  'SQLITE_READONLY',
  'SQLITE_READONLY_DIRECTORY',
]);

/**
 * "unable to open database file" names nothing: the message says which file, whose it is, and who
 * tried (a root-owned agent.db left by a CLI command put the service in a restart loop).
 */
function unopenable(file: string, e: unknown): AgentError {
  const uid = process.getuid?.();
  const who = uid === undefined ? '' : ` as uid ${uid}`;
  return new AgentError(
    'DATABASE_UNOPENABLE',
    `cannot open the database ${file}${who} (${ownerAndMode(file)}; its folder: ${ownerAndMode(path.dirname(file))}): ${(e as Error).message}; give the files in dataDir to the service user (chown -R telematics-agent: ${path.dirname(file)})`,
    { class: 'config', cause: e },
  );
}

function openAndMigrate(file: string, options: OpenDatabaseOptions): Database {
  const isNew = !existsSync(file);
  let db: Database | undefined;
  try {
    if (isNew) closeSync(openSync(file, 'a', 0o600));
    db = new BetterSqlite3(file, { nativeBinding: sqliteBinding(), timeout: options.busyTimeoutMs ?? 5000 });
    if (isNew) {
      // Small pages: the outbox commits about once a second, and every commit writes whole pages
      // to the WAL. 1 KiB pages keep the bytes written per recorded fix low on an SD card.
      db.pragma('page_size = 1024');
    }
    // The WAL and its index are created here; a write that is refused shows here too.
    db.pragma('journal_mode = WAL');
  } catch (e) {
    db?.close();
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && ACCESS_CODES.has(code)) throw unopenable(file, e);
    throw e;
  }
  // Created by a root CLI command (register, device show, location): the service user must own them.
  giveToDataDirOwner(path.dirname(file), [file, `${file}-wal`, `${file}-shm`]);
  try {
    // better-sqlite3 compiles with SQLITE_DEFAULT_WAL_SYNCHRONOUS=1 (NORMAL), which can lose
    // committed transactions on a power cut. Fixes and token rotations must survive one.
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    // Reading the schema touches the file header and the first page: a garbage file fails here.
    db.prepare('SELECT count(*) AS n FROM sqlite_master').get();
    migrate(db);
    for (const suffix of ['', '-wal', '-shm']) {
      if (existsSync(file + suffix)) chmodSync(file + suffix, 0o600);
    }
    return guardDatabase(db, options.onFault ?? (() => undefined));
  } catch (e) {
    db.close();
    throw e;
  }
}

function asideName(file: string, when: Date): string {
  return `${file}.corrupt-${when.toISOString().replace(/[:.]/g, '-')}`;
}

/** Renames a database with its -wal and -shm. */
function moveFiles(from: string, to: string): void {
  for (const suffix of ['', '-wal', '-shm']) {
    if (existsSync(from + suffix)) renameSync(from + suffix, to + suffix);
  }
}

function removeDatabaseFiles(file: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(file + suffix, { force: true });
}

/** The renames reach the card before anything is written to the new agent.db. */
function syncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
