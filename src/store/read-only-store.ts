import { existsSync } from 'node:fs';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import path from 'node:path';
import { databasePath } from './database.js';
import { readImage } from './read-only-database.js';
import { isReadOnlyFilesystem } from '../system/data-dir-fault.js';

/**
 * The database as `status` (daemon down) and `doctor` read it: a read-only connection (no
 * migration, no WAL checkpoint, no lock taken from the daemon) and the table SQL in store/, next to
 * the schema it reads. A table missing from an older or half-made file reads as empty.
 */
export interface StoredRegistrationFacts {
  externalSystemId: string;
  externalDeviceId: string;
  deviceUUID: string;
  registeredAt: number;
}

export class ReadOnlyStore {
  readonly #db: Database;
  readonly #tables: Set<string>;

  private constructor(db: Database) {
    this.#db = db;
    this.#tables = new Set(
      (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name),
    );
  }

  /** undefined when there is no database file in `dataDir`; throws when it cannot be read. */
  static open(dataDir: string, options: { timeoutMs?: number } = {}): ReadOnlyStore | undefined {
    const file = databasePath(dataDir);
    if (!existsSync(file)) return undefined;
    const db = openReadOnly(file, options.timeoutMs ?? 500);
    try {
      return new ReadOnlyStore(db);
    } catch (e) {
      db.close();
      throw e;
    }
  }

  close(): void {
    this.#db.close();
  }

  counters(): Map<string, number> {
    if (!this.#tables.has('counters')) return new Map();
    return new Map(
      (this.#db.prepare('SELECT name, value FROM counters').all() as { name: string; value: number }[]).map((r) => [r.name, r.value]),
    );
  }

  meta(key: string): string | undefined {
    if (!this.#tables.has('meta')) return undefined;
    return (this.#db.prepare('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined)?.value;
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
    if (!this.#tables.has('device_identity')) return undefined;
    return this.#db.prepare('SELECT external_device_id AS externalDeviceId, source FROM device_identity WHERE id = 1').get() as
      | { externalDeviceId: string; source: string }
      | undefined;
  }

  registration(): StoredRegistrationFacts | undefined {
    if (!this.#tables.has('device_registration')) return undefined;
    return this.#db
      .prepare(
        `SELECT external_system_id AS externalSystemId, external_device_id AS externalDeviceId, device_uuid AS deviceUUID,
                registered_at AS registeredAt FROM device_registration WHERE id = 1`,
      )
      .get() as StoredRegistrationFacts | undefined;
  }

  /** When the stored token pair was obtained (wall ms) and its lifetime; never the tokens themselves. */
  tokenAge(): { obtainedAt: number; expiresInS: number } | undefined {
    if (!this.#tables.has('token_pair')) return undefined;
    return this.#db.prepare('SELECT obtained_at AS obtainedAt, expires_in_s AS expiresInS FROM token_pair WHERE id = 1').get() as
      | { obtainedAt: number; expiresInS: number }
      | undefined;
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
 * can be made (SQLITE_CANTOPEN, issue 22.10: status said "cannot read agent.db" and "device never
 * registered" to root), so it is read as a copy (read-only-database.ts readImage).
 */
function openReadOnly(file: string, timeout: number): Database {
  let db: Database | undefined;
  try {
    db = new BetterSqlite3(file, { readonly: true, fileMustExist: true, timeout });
    // The WAL's -shm is opened at the first read, not by the constructor.
    db.prepare('SELECT count(*) AS n FROM sqlite_master').get();
    return db;
  } catch (e) {
    db?.close();
    if ((e as { code?: string }).code !== 'SQLITE_CANTOPEN' || !isReadOnlyFilesystem(path.dirname(file))) throw e;
    return new BetterSqlite3(readImage(file), { readonly: true });
  }
}
