import { existsSync, readFileSync, statSync } from 'node:fs';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { sqliteBinding } from '../system/sqlite-binding.js';
import type { Logger } from '../log.js';
import { databasePath } from './database.js';
import { LATEST_VERSION, migrate } from './migrations.js';

/**
 * The daemon's database on a card that takes no writes: the whole of it copied into memory, opened
 * read-only, so that every write meets SQLITE_READONLY as it would on the
 * card and the components' own fault paths apply (the outbox holds fixes in memory under its one
 * bound, a token pair waits in memory, a registration is kept in memory).
 *
 * Why a copy, not the file: a read-only connection to a WAL database needs its -shm file, and a
 * database closed cleanly has none (SQLite deletes -wal and -shm at the last close), nor may it be
 * created on a read-only file system: better-sqlite3 answers SQLITE_CANTOPEN (its URI filenames,
 * which could say immutable=1, are off unless SQLITE_USE_URI is set in the environment before it
 * loads). The file is first opened read-only, which works when the -wal and -shm are there (a
 * card remounted read-only under a running agent, or after a power cut) and includes what the WAL
 * holds; otherwise the file alone is the whole database and is read as it is, with its header's
 * WAL marks (bytes 18-19) set to rollback in the copy, as SQLite's in-memory database wants. A copy
 * also cannot change under the daemon when the card becomes writable and another process writes
 * to it before the daemon reopens it read-write. Migrations the file lacks run on the copy.
 *
 * Copies in memory at once: a file whose schema is current (its header's user_version) is opened
 * read-only from the image as it is, two copies for a moment (the Buffer read, SQLite's own), one
 * once the Buffer is collected. Only a file from an older agent goes through a writable copy to be
 * migrated and is serialized again (up to four copies for a moment, after an upgrade on a
 * read-only card only).
 *
 * The copy costs memory: a file over MAX_COPY_BYTES (a backlog of ~1 million fixes) is not read,
 * and the daemon runs on the empty schema as if the card had no database (fixes held, nothing
 * delivered until the card is writable).
 */
export const MAX_COPY_BYTES = 64 * 1024 * 1024;

export interface ReadOnlyDatabase {
  db: Database;
  /** What was read: the card's database, or the empty schema (no file, or one too large or unreadable). */
  source: 'file' | 'empty';
}

export function openReadOnlyDatabase(dataDir: string, logger: Pick<Logger, 'warn'>): ReadOnlyDatabase {
  const file = databasePath(dataDir);
  let image: Buffer | undefined;
  try {
    if (existsSync(file)) {
      const size = statSync(file).size;
      if (size > MAX_COPY_BYTES)
        logger.warn({ file, bytes: size, max: MAX_COPY_BYTES }, 'the read-only database is too large to copy into memory: not read');
      else image = readImage(file);
    }
  } catch (e) {
    logger.warn({ file, err: (e as Error).message }, 'the read-only database cannot be read: running without it');
  }
  if (image) {
    try {
      return { db: readOnlyCopy(image), source: 'file' };
    } catch (e) {
      logger.warn(
        { file, err: (e as Error).message },
        'the read-only database cannot be used (damaged, or from a newer agent): running without it',
      );
    }
  }
  return { db: readOnlyCopy(undefined), source: 'empty' };
}

/**
 * The database's pages as one connection sees them: through the WAL when its files are there. The
 * header's WAL marks are set to rollback either way: SQLite's in-memory database opens a WAL-marked
 * image read-write only ("unable to open database file" read-only, which made a card remounted
 * read-only under a running agent read as the empty schema).
 */
export function readImage(file: string): Buffer {
  let db: Database | undefined;
  let bytes: Buffer;
  try {
    db = new BetterSqlite3(file, { nativeBinding: sqliteBinding(), readonly: true, fileMustExist: true, timeout: 500 });
    db.prepare('SELECT count(*) AS n FROM sqlite_master').get();
    bytes = db.serialize();
  } catch (e) {
    if ((e as { code?: string }).code !== 'SQLITE_CANTOPEN') throw e;
    bytes = readFileSync(file);
  } finally {
    db?.close();
  }
  // File format write/read versions: 2 = WAL, 1 = rollback journal (sqlite.org/fileformat.html 1.3).
  if (bytes.length >= 100 && bytes[18] === 2 && bytes[19] === 2) {
    bytes[18] = 1;
    bytes[19] = 1;
  }
  return bytes;
}

/** The image (or an empty database) migrated in memory and opened read-only. */
function readOnlyCopy(image: Buffer | undefined): Database {
  if (image && image.length >= 100 && image.readUInt32BE(USER_VERSION_OFFSET) === LATEST_VERSION) {
    const db = new BetterSqlite3(image, { nativeBinding: sqliteBinding(), readonly: true });
    try {
      db.prepare('SELECT count(*) AS n FROM sqlite_master').get();
      return db;
    } catch (e) {
      db.close();
      throw e;
    }
  }
  const work = new BetterSqlite3(image ?? ':memory:', { nativeBinding: sqliteBinding() });
  let migrated: Buffer;
  try {
    work.prepare('SELECT count(*) AS n FROM sqlite_master').get();
    migrate(work);
    migrated = work.serialize();
  } finally {
    work.close();
  }
  return new BetterSqlite3(migrated, { nativeBinding: sqliteBinding(), readonly: true });
}

/** Where the database header keeps PRAGMA user_version (sqlite.org/fileformat.html 1.3). */
const USER_VERSION_OFFSET = 60;
