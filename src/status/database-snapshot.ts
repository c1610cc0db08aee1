/**
 * The status when the daemon is not running, read from its database without changing it
 * (read-only connection: no migration, no WAL checkpoint). What only the live daemon knows
 * (receiver, uptime, token age on the monotonic clock) is absent; the header says so first.
 */
import { existsSync } from 'node:fs';
import { WIRE_META_KEY, type WireUsage } from '../platform/transport/wire-counter.js';
import { databasePath } from '../store/database.js';
import { DatabaseReader } from '../store/database-reader.js';
import { COUNTER, DELIVERY_META } from '../store/outbox/counters.js';
import {
  ENGINE_HOURS_SETTING_KEY,
  MOTION_META_KEY,
  ODOMETER_SETTING_KEY,
  type EngineHoursSetting,
  type MotionRecord,
  type OdometerSetting,
} from '../motion/motion-record.js';
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
  /**
   * From the configuration: false with motion.enabled false (no motion line), else whether an
   * ignition input is wired; absent when the configuration could not be read.
   */
  motion?: { ignitionWired: boolean } | false;
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
  let store: DatabaseReader | undefined;
  try {
    store = DatabaseReader.open(o.dataDir);
    if (store) {
      fill(store, snapshot, o.wallMs);
      if (o.motion !== false) storedMotion(store, snapshot, o.motion);
    }
    if (o.configuredDeviceId !== undefined && snapshot.registration.externalDeviceId === o.configuredDeviceId)
      snapshot.registration.externalDeviceIdSource = 'config';
  } catch (e) {
    snapshot.notes = [`cannot read ${file}: ${(e as Error).message} (run as the service user or root)`];
  } finally {
    store?.close();
  }
  return snapshot;
}

function fill(db: DatabaseReader, s: StatusSnapshot, wallMs: number): void {
  const counters = db.counters();
  const meta = (key: string): string | undefined => db.meta(key);
  const metaJson = <T>(key: string): T | undefined => db.metaJson<T>(key);

  const id = db.identity();
  if (id) {
    s.registration.externalDeviceId = id.externalDeviceId;
    s.registration.externalDeviceIdSource = id.source;
  }
  const reg = db.registration();
  if (reg) Object.assign(s.registration, reg);

  const token = db.tokenAge();
  const rejected = metaJson<{ until?: number }>('auth.rejectedUntil') ?? metaJson<{ until?: number }>('credentials.rejectedUntil');
  s.token = {
    // Wall-clock age only: the monotonic clock of the process that obtained it is gone.
    state: rejected
      ? 'rejected'
      : metaJson<{ state?: string }>('token.refreshState')?.state === 'sending'
        ? 'refreshing'
        : !token
          ? 'none'
          : wallMs - token.obtainedAt < token.expiresInS * 1000
            ? 'valid'
            : 'expired',
    passwordGrants: counters.get(COUNTERS.passwordGrants) ?? 0,
    refreshes: counters.get(COUNTERS.refreshes) ?? 0,
  };
  // Wall stamps only here: a host clock behind them (a boot at 1970) gives no age, said so, never "0 s".
  const behind: string[] = [];
  if (token) {
    if (wallMs >= token.obtainedAt) s.token.ageS = (wallMs - token.obtainedAt) / 1000;
    else behind.push('the token');
  }

  const o = db.outbox();
  s.outbox.pending = o.pending;
  // No receiver to ask while the daemon is down: the host clock, said as such.
  if (o.oldestFixTime !== undefined) {
    if (wallMs >= o.oldestFixTime) {
      s.outbox.oldestPendingAgeS = (wallMs - o.oldestFixTime) / 1000;
      s.outbox.oldestPendingAgeBasis = 'host clock';
    } else behind.push('the oldest waiting fix');
  }
  if (behind.length > 0)
    (s.notes ??= []).push(
      `no age for ${behind.join(' or ')}: the host clock (${new Date(wallMs).toISOString()}) is before it; the clock is behind or was set back`,
    );
  s.outbox.deadLetters = db.deadLetters();
  const lastDead = db.lastDeadLetter();
  if (lastDead) s.outbox.lastDeadLetter = lastDead;
  s.outbox.thinned = counters.get(COUNTERS.thinned) ?? 0;
  s.outbox.sentTotal = counters.get(COUNTERS.sent) ?? 0;
  // Written with the outbox's counters (at most a minute late, and at stop).
  s.outbox.eventsRefused = counters.get(COUNTER.eventsRefused) ?? 0;
  const today = metaJson<{ day: string; count: number }>(DELIVERY_META.sentToday);
  s.outbox.sentToday = today && today.day === new Date(wallMs).toISOString().slice(0, 10) ? today.count : 0;

  const repaired = repairedFacts({ get: meta });
  if (repaired) s.disk.repaired = repaired;
  const wire = metaJson<WireUsage & { protocol?: string }>(WIRE_META_KEY);
  if (wire?.today && wire.thisMonth) {
    const day = new Date(wallMs).toISOString().slice(0, 10);
    const zero = { sent: 0, received: 0 };
    s.network = {
      ...(wire.protocol ? { protocol: wire.protocol } : {}),
      day,
      today: wire.day === day ? wire.today : zero,
      month: day.slice(0, 7),
      thisMonth: wire.month === day.slice(0, 7) ? wire.thisMonth : zero,
    };
  }

  const lastSuccess = Number(meta(UPLOAD_FACT_KEYS.lastSuccessAt));
  if (Number.isFinite(lastSuccess) && lastSuccess > 0) s.upload.lastSuccessAt = lastSuccess;
  const lastError = metaJson<{ code: string; class: string; message: string; at?: number }>(UPLOAD_FACT_KEYS.lastError);
  if (lastError?.code) s.upload.lastError = lastError;
}

/**
 * The motion state the daemon stored (the tracker's MotionRecord), marked last known. An
 * installer's `odometer set` or `engine-hours set` the daemon has not applied yet is the count it
 * will start from.
 */
function storedMotion(db: DatabaseReader, s: StatusSnapshot, o: { ignitionWired: boolean } | undefined): void {
  const record = db.metaJson<MotionRecord>(MOTION_META_KEY);
  const setting = db.metaJson<OdometerSetting>(ODOMETER_SETTING_KEY);
  const pending = setting && Number.isFinite(setting.metres) && setting.setAt !== record?.appliedSettingAt ? setting : undefined;
  // As the tracker applies it (motion-record.ts applyEngineHoursSetting).
  const hours = db.metaJson<EngineHoursSetting>(ENGINE_HOURS_SETTING_KEY);
  const pendingHours =
    hours && Number.isFinite(hours.seconds) && hours.seconds >= 0 && hours.setAt !== record?.appliedEngineSettingAt ? hours : undefined;
  if (!record && !pending && !pendingHours) return;
  const movement = record?.movement;
  // Without the configuration, an ignition the daemon stored a state for was wired.
  const wired = o?.ignitionWired ?? record?.ignition !== undefined;
  const engineS = pendingHours ? pendingHours.seconds : record?.engineS;
  // As the daemon shows them, to one decimal: only with an ignition input (without the configuration, whatever was stored or set).
  const showHours = o ? o.ignitionWired : true;
  s.motion = {
    state: movement?.state ?? 'unknown',
    ...(movement?.since !== undefined ? { since: new Date(movement.since).toISOString() } : {}),
    odometerM: Math.round(pending ? pending.metres : (record?.odometerM ?? 0)),
    ignition: wired ? (record?.ignition ?? 'unknown') : 'not wired',
    ...(showHours && typeof engineS === 'number' && Number.isFinite(engineS) ? { engineHours: Math.round(engineS / 360) / 10 } : {}),
    lastKnown: true,
  };
  if (pending)
    (s.notes ??= []).push(
      `odometer set to ${(pending.metres / 1000).toFixed(1)} km by the installer: the daemon starts from it at its next start`,
    );
  if (pendingHours)
    (s.notes ??= []).push(
      showHours
        ? `engine hours set to ${(pendingHours.seconds / 3600).toFixed(1)} h by the installer: the daemon starts from it at its next start`
        : // The tracker takes it, but counts ignition-on time and carries it on the events only with an input.
          `engine hours set to ${(pendingHours.seconds / 3600).toFixed(1)} h by the installer: the daemon takes it at its next start, but counts and sends engine hours only with an ignition input (ignition.file or ignition.gpio)`,
    );
}
