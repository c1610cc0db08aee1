import { closeSync, constants, existsSync, fstatSync, ftruncateSync, openSync, readSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { sqliteBinding } from './sqlite-binding.js';
import { AgentError } from '../errors.js';
import type { Logger } from '../log.js';
import { giveToDataDirOwner } from './data-owner.js';

export const LOCK_FILE = 'agent.lock';

/**
 * One agent per data directory: `run` holds an exclusive lock on `<dataDir>/agent.lock`
 * for its whole life, and a second `run` on the same directory stops before it touches the
 * receiver, the database or the status socket.
 *
 * The lock must be one the kernel drops when the process dies (SIGKILL, OOM kill, power cut), so a
 * PID file alone will not do, and `flock(1)` in the unit would not cover a technician's `run` by
 * hand. Node has no flock(2); rather than a second native module to build on every gateway
 * (fs-ext, nan-based, compiles per Node ABI), the lock is SQLite's: better-sqlite3 is already built
 * here, and SQLite takes POSIX fcntl() record locks, which the kernel releases with the process.
 * The lock file is a tiny SQLite database opened in EXCLUSIVE locking mode (no journal); after
 * one write the connection keeps its EXCLUSIVE lock until it is closed, and any other connection,
 * in this process or another, gets SQLITE_BUSY at once (timeout 0).
 *
 * The holder's pid is its header's user_version (offset 60, big-endian): fcntl locks are advisory,
 * so the second agent can read those four bytes for its message while the file is locked.
 */
export class InstanceLock {
  readonly #db: Database;
  readonly file: string;

  private constructor(db: Database, file: string) {
    this.#db = db;
    this.file = file;
  }

  /**
   * Takes the lock or throws AGENT_ALREADY_RUNNING naming the holder's pid. dataDir must exist.
   *
   * The lock file is rewritten on every start with no journal, so a power cut can leave it damaged
   * (SQLITE_NOTADB, SQLITE_CORRUPT); that must not stop the agent for good. Such a file holds
   * nothing but the pid, so it is emptied (in place: a concurrent start that already holds the
   * fcntl lock keeps it on the same inode, where unlinking would let two agents run) and opened once
   * more, with a warning. A second failure is the error.
   */
  static acquire(dataDir: string, options: { pid?: number; logger?: Pick<Logger, 'warn'> } = {}): InstanceLock {
    return InstanceLock.acquireFile(path.join(dataDir, LOCK_FILE), dataDir, options);
  }

  /** acquire() on another file standing for `dataDir` (daemon-locks.ts: the runtime directory's). */
  static acquireFile(file: string, dataDir: string, options: { pid?: number; logger?: Pick<Logger, 'warn'> } = {}): InstanceLock {
    const pid = options.pid ?? process.pid;
    let db: Database;
    try {
      db = open(file, pid);
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code !== 'SQLITE_NOTADB' && !code?.startsWith('SQLITE_CORRUPT')) throw lockError(e, dataDir, file);
      options.logger?.warn({ file, code }, 'the lock file was damaged (a power cut while it was written?): emptied and taken again');
      try {
        empty(file);
        db = open(file, pid);
      } catch (again) {
        throw lockError(again, dataDir, file);
      }
    }
    giveToDataDirOwner(path.dirname(file), [file]);
    return new InstanceLock(db, file);
  }

  /** Releases the lock (the kernel does the same when the process ends). */
  release(): void {
    if (this.#db.open) this.#db.close();
  }
}

function open(file: string, pid: number): Database {
  let db: Database | undefined;
  try {
    if (!existsSync(file)) closeSync(openSync(file, 'a', 0o600));
    db = new BetterSqlite3(file, { nativeBinding: sqliteBinding(), timeout: 0 });
    db.pragma('locking_mode = EXCLUSIVE');
    db.pragma('journal_mode = OFF');
    // A write takes the EXCLUSIVE lock, which EXCLUSIVE locking mode then never releases.
    db.pragma(`user_version = ${Math.trunc(pid) >>> 0}`);
    return db;
  } catch (e) {
    db?.close();
    throw e;
  }
}

/** Truncates a regular file, never one a symlink points at (dataDir is the service user's; `run` may be started as root). */
function empty(file: string): void {
  const fd = openSync(file, constants.O_WRONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY);
  try {
    if (!fstatSync(fd).isFile()) throw new Error('not a regular file');
    ftruncateSync(fd, 0);
  } finally {
    closeSync(fd);
  }
}

function lockError(e: unknown, dataDir: string, file: string): AgentError {
  if ((e as { code?: string }).code === 'SQLITE_BUSY') {
    const holder = readHolderPid(file);
    return new AgentError('AGENT_ALREADY_RUNNING', `another agent is running on ${dataDir} (pid ${holder ?? 'unknown'})`, {
      class: 'config',
      cause: e,
    });
  }
  return new AgentError('DATA_DIR_UNUSABLE', `cannot open the lock ${file}: ${(e as Error).message}`, {
    class: 'config',
    cause: e,
    // EROFS from open(2), or SQLite's "attempt to write a readonly database" on an existing file.
    ...(lockCode(e) === 'EROFS' || lockCode(e).startsWith('SQLITE_READONLY') ? { details: { readOnly: true } } : {}),
  });
}

/** The pid in the lock file's header, read without SQLite (the file is locked). */
export function readHolderPid(file: string): number | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const header = Buffer.alloc(64);
    if (readSync(fd, header, 0, 64, 0) < 64) return undefined;
    const pid = header.readUInt32BE(60);
    return pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function lockCode(e: unknown): string {
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'string' ? code : '';
}
