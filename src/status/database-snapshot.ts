/**
 * The status when the daemon is not running, read from its database without changing it
 * (read-only connection: no migration, no WAL checkpoint). What only the live daemon knows
 * (receiver, uptime, token age on the monotonic clock) is absent; the header says so first.
 */
import { existsSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { databasePath } from '../store/database.js';
import { DELIVERY_META } from '../store/outbox-counters.js';
import { VERSION } from '../version.js';
import { diskSummary } from './disk.js';
import { repairedFacts } from './store-view.js';
import { SNAPSHOT_SCHEMA, type StatusSnapshot } from './snapshot.js';
import { UPLOAD_FACT_KEYS } from './upload-facts.js';

export interface DatabaseSnapshotOptions {
  dataDir: string;
  minFreeBytes?: number;
  wallMs: number;
  /**
   * device.externalDeviceId from the configuration: the registrar uses it before any stored
   * identity and stores none then, so the database alone cannot say where the id came from.
   */
  configuredDeviceId?: string;
}

/** Meta keys and counter names written by the platform and upload code (see their stores). */
const COUNTERS = { sent: 'upload.sent', thinned: 'outbox.thinned', passwordGrants: 'auth.passwordGrants', refreshes: 'auth.refreshes' };

export function databaseSnapshot(o: DatabaseSnapshotOptions): StatusSnapshot {
  const snapshot: StatusSnapshot = {
    schema: SNAPSHOT_SCHEMA,
    takenAt: o.wallMs,
    source: 'database',
    daemon: { running: false, version: VERSION },
    registration: {},
    outbox: { pending: 0, sentToday: 0, thinned: 0, deadLetters: 0 },
    upload: {},
    disk: diskSummary(o.dataDir, o.minFreeBytes),
  };
  const file = databasePath(o.dataDir);
  if (!existsSync(file)) {
    snapshot.notes = [`no database at ${file}: the agent has never run with this dataDir`];
    return snapshot;
  }
  let db: BetterSqlite3.Database | undefined;
  try {
    db = new BetterSqlite3(file, { readonly: true, fileMustExist: true, timeout: 500 });
    fill(db, snapshot, o.wallMs);
    if (o.configuredDeviceId !== undefined && snapshot.registration.externalDeviceId === o.configuredDeviceId)
      snapshot.registration.externalDeviceIdSource = 'config';
  } catch (e) {
    snapshot.notes = [`cannot read ${file}: ${(e as Error).message} (run as the service user or root)`];
  } finally {
    db?.close();
  }
  return snapshot;
}

function has(db: BetterSqlite3.Database, table: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) !== undefined;
}

function fill(db: BetterSqlite3.Database, s: StatusSnapshot, wallMs: number): void {
  const counters = new Map<string, number>();
  if (has(db, 'counters'))
    for (const r of db.prepare('SELECT name, value FROM counters').all() as { name: string; value: number }[])
      counters.set(r.name, r.value);
  const meta = (key: string): string | undefined =>
    has(db, 'meta') ? (db.prepare('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined)?.value : undefined;
  const metaJson = <T>(key: string): T | undefined => {
    const v = meta(key);
    try {
      return v === undefined ? undefined : (JSON.parse(v) as T);
    } catch {
      return undefined;
    }
  };

  if (has(db, 'device_identity')) {
    const id = db.prepare('SELECT external_device_id AS id, source FROM device_identity WHERE id = 1').get() as
      | { id: string; source: string }
      | undefined;
    if (id) {
      s.registration.externalDeviceId = id.id;
      s.registration.externalDeviceIdSource = id.source;
    }
  }
  if (has(db, 'device_registration')) {
    const reg = db
      .prepare(
        'SELECT external_system_id AS sys, external_device_id AS dev, device_uuid AS uuid, registered_at AS at FROM device_registration WHERE id = 1',
      )
      .get() as { sys: string; dev: string; uuid: string; at: number } | undefined;
    if (reg)
      Object.assign(s.registration, { externalSystemId: reg.sys, externalDeviceId: reg.dev, deviceUUID: reg.uuid, registeredAt: reg.at });
  }

  const token = has(db, 'token_pair')
    ? (db.prepare('SELECT obtained_at AS at, expires_in_s AS ttl FROM token_pair WHERE id = 1').get() as
        | { at: number; ttl: number }
        | undefined)
    : undefined;
  const rejected = metaJson<{ until?: number }>('auth.rejectedUntil') ?? metaJson<{ until?: number }>('credentials.rejectedUntil');
  s.token = {
    // Wall-clock age only: the monotonic clock of the process that obtained it is gone.
    state: rejected
      ? 'rejected'
      : metaJson<{ state?: string }>('token.refreshState')?.state === 'sending'
        ? 'refreshing'
        : !token
          ? 'none'
          : wallMs - token.at < token.ttl * 1000
            ? 'valid'
            : 'expired',
    passwordGrants: counters.get(COUNTERS.passwordGrants) ?? 0,
    refreshes: counters.get(COUNTERS.refreshes) ?? 0,
  };
  if (token) s.token.ageS = Math.max(0, (wallMs - token.at) / 1000);

  if (has(db, 'outbox')) {
    const o = db.prepare('SELECT count(*) AS n, min(fix_time) AS oldest, max(fix_time) AS newest FROM outbox').get() as {
      n: number;
      oldest: number | null;
      newest: number | null;
    };
    s.outbox.pending = o.n;
    if (o.oldest !== null && o.newest !== null) s.outbox.oldestPendingAgeS = (o.newest - o.oldest) / 1000;
  }
  if (has(db, 'dead_letter')) s.outbox.deadLetters = (db.prepare('SELECT count(*) AS n FROM dead_letter').get() as { n: number }).n;
  s.outbox.thinned = counters.get(COUNTERS.thinned) ?? 0;
  s.outbox.sentTotal = counters.get(COUNTERS.sent) ?? 0;
  const today = metaJson<{ day: string; count: number }>(DELIVERY_META.sentToday);
  s.outbox.sentToday = today && today.day === new Date(wallMs).toISOString().slice(0, 10) ? today.count : 0;

  const repaired = repairedFacts({ get: meta });
  if (repaired) s.disk.repaired = repaired;

  const lastSuccess = Number(meta(UPLOAD_FACT_KEYS.lastSuccessAt));
  if (Number.isFinite(lastSuccess) && lastSuccess > 0) s.upload.lastSuccessAt = lastSuccess;
  const lastError = metaJson<{ code: string; class: string; message: string; at?: number }>(UPLOAD_FACT_KEYS.lastError);
  if (lastError?.code) s.upload.lastError = lastError;
}
