import { existsSync } from 'node:fs';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { sqliteBinding } from '../system/sqlite-binding.js';
import path from 'node:path';
import { databasePath } from './database.js';
import { DeviceStore } from './device-store.js';
import { MetaStore } from './meta.js';
import { readImage } from './read-only-copy.js';
import { TokenStore } from './token-store.js';
import { isReadOnlyFilesystem } from '../system/data-dir-fault.js';

/**
 * The card's database as `status` (daemon down) and `doctor` read it, beside a running daemon: a
 * read-only connection (no migration, no WAL checkpoint, no lock taken from the daemon) read
 * through the daemon's own record stores. A table missing from an older or half-made file reads
 * as empty. (read-only-copy.ts is the other job: the daemon's whole database in memory on a card
 * that takes no writes.)
 */
export interface StoredRegistrationFacts {
  externalSystemId: string;
  externalDeviceId: string;
  deviceUUID: string;
  registeredAt: number;
}

export class DatabaseReader {
  readonly #db: Database;
  readonly #tables: Set<string>;
  /** The daemon's own record stores over this connection (their SQL, not a copy of it), where their tables exist. */
  readonly #meta: MetaStore | undefined;
  readonly #devices: DeviceStore | undefined;
  readonly #tokens: TokenStore | undefined;

  private constructor(db: Database) {
    this.#db = db;
    this.#tables = new Set(
      (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name),
    );
    const has = (...names: string[]) => names.every((n) => this.#tables.has(n));
    this.#meta = has('meta', 'counters') ? new MetaStore(db) : undefined;
    this.#devices = has('device_identity', 'device_registration') ? new DeviceStore(db) : undefined;
    this.#tokens = this.#meta && has('token_pair') ? new TokenStore(db, this.#meta) : undefined;
  }

  /** undefined when there is no database file in `dataDir`; throws when it cannot be read. */
  static open(dataDir: string, options: { timeoutMs?: number } = {}): DatabaseReader | undefined {
    const file = databasePath(dataDir);
    if (!existsSync(file)) return undefined;
    const db = openReadOnly(file, options.timeoutMs ?? 500);
    try {
      return new DatabaseReader(db);
    } catch (e) {
      db.close();
      throw e;
    }
  }

  close(): void {
    this.#db.close();
  }

  counters(): Map<string, number> {
    return new Map(Object.entries(this.#meta?.counters() ?? {}));
  }

  meta(key: string): string | undefined {
    return this.#meta?.get(key);
  }

  /** A JSON meta value; undefined when absent or not JSON. */
  metaJson<T>(key: string): T | undefined {
    const v = this.meta(key);
    try {
      return v === undefined ? undefined : (JSON.parse(v) as T);
    } catch {
      return undefined;
    }
  }

  identity(): { externalDeviceId: string; source: string } | undefined {
    const id = this.#devices?.identity();
    return id ? { externalDeviceId: id.externalDeviceId, source: id.source } : undefined;
  }

  registration(): StoredRegistrationFacts | undefined {
    const r = this.#devices?.registration();
    return r
      ? {
          externalSystemId: r.externalSystemId,
          externalDeviceId: r.externalDeviceId,
          deviceUUID: r.deviceUUID,
          registeredAt: r.registeredAt,
        }
      : undefined;
  }

  /** When the stored token pair was obtained (wall ms) and its lifetime; never the tokens themselves. */
  tokenAge(): { obtainedAt: number; expiresInS: number } | undefined {
    return this.#tokens?.age();
  }

  /** Queued fixes and the GNSS times of the oldest and newest. */
  outbox(): { pending: number; oldestFixTime?: number; newestFixTime?: number } {
    if (!this.#tables.has('outbox')) return { pending: 0 };
    const o = this.#db.prepare('SELECT count(*) AS n, min(fix_time) AS oldest, max(fix_time) AS newest FROM outbox').get() as {
      n: number;
      oldest: number | null;
      newest: number | null;
    };
    return {
      pending: o.n,
      ...(o.oldest !== null ? { oldestFixTime: o.oldest } : {}),
      ...(o.newest !== null ? { newestFixTime: o.newest } : {}),
    };
  }

  deadLetters(): number {
    if (!this.#tables.has('dead_letter')) return 0;
    return (this.#db.prepare('SELECT count(*) AS n FROM dead_letter').get() as { n: number }).n;
  }

  /** The newest dead letter: when (wall ms), the platform's status and the reason. */
  lastDeadLetter(): { at: number; status?: number; reason: string } | undefined {
    if (!this.#tables.has('dead_letter')) return undefined;
    const r = this.#db.prepare('SELECT status, error, failed_at FROM dead_letter ORDER BY seq DESC LIMIT 1').get() as
      | { status: number | null; error: string; failed_at: number }
      | undefined;
    return r ? { at: r.failed_at, ...(r.status !== null ? { status: r.status } : {}), reason: r.error.slice(0, 300) } : undefined;
  }
}

/**
 * A read-only connection; on a read-only card a WAL database closed cleanly has no -shm and none
 * can be made (SQLITE_CANTOPEN: status said "cannot read agent.db" and "device never
 * registered" to root), so it is read as a copy (read-only-copy.ts readImage).
 */
function openReadOnly(file: string, timeout: number): Database {
  let db: Database | undefined;
  try {
    db = new BetterSqlite3(file, { nativeBinding: sqliteBinding(), readonly: true, fileMustExist: true, timeout });
    // The WAL's -shm is opened at the first read, not by the constructor.
    db.prepare('SELECT count(*) AS n FROM sqlite_master').get();
    return db;
  } catch (e) {
    db?.close();
    if ((e as { code?: string }).code !== 'SQLITE_CANTOPEN' || !isReadOnlyFilesystem(path.dirname(file))) throw e;
    return new BetterSqlite3(readImage(file), { nativeBinding: sqliteBinding(), readonly: true });
  }
}
