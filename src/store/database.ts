import { chmodSync, closeSync, existsSync, mkdirSync, openSync, renameSync, statSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { AgentError } from '../errors.js';
import type { Logger } from '../log.js';
import { migrate } from './migrations.js';
import { guardDatabase, isCorrupt, type StoreFaultListener } from './store-faults.js';

export type { Database } from 'better-sqlite3';

export const DATABASE_FILE = 'agent.db';

export interface OpenDatabaseOptions {
  dataDir: string;
  logger: Logger;
  /** Milliseconds to wait for another process's write lock before SQLITE_BUSY. */
  busyTimeoutMs?: number;
  /** Wall clock for the corrupt-file suffix only. */
  now?: () => Date;
  /** Told of every disk-full or corruption fault a statement of this database meets (store-faults.ts). */
  onFault?: StoreFaultListener;
}

export function databasePath(dataDir: string): string {
  return path.join(dataDir, DATABASE_FILE);
}

/**
 * Opens `<dataDir>/agent.db`, creating the directory (0700) and the file (0600), sets the pragmas
 * every connection needs, and migrates the schema. A corrupt or garbage file is moved aside with a
 * timestamp suffix and a fresh database is created, so the agent never crash-loops on it.
 */
export function openDatabase(options: OpenDatabaseOptions): Database {
  ensureDataDir(options.dataDir);
  const file = databasePath(options.dataDir);
  try {
    return openAndMigrate(file, options);
  } catch (e) {
    if (!isCorrupt(e)) throw e;
    const aside = moveAside(file, (options.now ?? (() => new Date()))());
    options.logger.error(
      { err: { code: (e as { code?: string }).code, message: (e as Error).message }, movedTo: aside, database: file },
      'database file is corrupt: moved it aside and created a fresh database; fixes buffered in the old file are not delivered',
    );
    return openAndMigrate(file, options);
  }
}

function openAndMigrate(file: string, options: OpenDatabaseOptions): Database {
  const isNew = !existsSync(file);
  if (isNew) closeSync(openSync(file, 'a', 0o600));
  const db = new BetterSqlite3(file, { timeout: options.busyTimeoutMs ?? 5000 });
  try {
    if (isNew) {
      // Small pages: the outbox commits about once a second, and every commit writes whole pages
      // to the WAL. 1 KiB pages keep the bytes written per recorded fix low on an SD card.
      db.pragma('page_size = 1024');
    }
    db.pragma('journal_mode = WAL');
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

function moveAside(file: string, when: Date): string {
  const stamp = when.toISOString().replace(/[:.]/g, '-');
  const aside = `${file}.corrupt-${stamp}`;
  for (const suffix of ['', '-wal', '-shm']) {
    if (existsSync(file + suffix)) renameSync(file + suffix, aside + suffix);
  }
  return aside;
}

export function ensureDataDir(dataDir: string): void {
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const st = statSync(dataDir);
    if (!st.isDirectory())
      throw new AgentError('DATA_DIR_NOT_DIRECTORY', `dataDir ${dataDir} exists but is not a directory`, { class: 'config' });
    if ((st.mode & 0o077) !== 0 && st.uid === process.getuid?.()) chmodSync(dataDir, 0o700);
  } catch (e) {
    if (e instanceof AgentError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    throw new AgentError(
      'DATA_DIR_UNUSABLE',
      `cannot create or use dataDir ${dataDir} (${code ?? String(e)}); create it for the service user or set dataDir`,
      { class: 'config', cause: e },
    );
  }
}
