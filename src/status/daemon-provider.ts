/**
 * The running daemon's StatusProvider: assembles a snapshot from narrow views of the components
 * the composition root (src/agent.ts) already has. Each view is a function, so the provider holds
 * no state of its own and never reaches into a component.
 */
import type { ReceiverHealthState } from '../gnss/health/receiver-health.js';
import type { Fix, SatelliteInView } from '../fix/fix.js';
import type { RegisteredDevice, TokenStatus, DeviceIdentity } from '../platform/contracts.js';
import type { Clock } from '../system/clock.js';
import { VERSION } from '../version.js';
import { diskSummary } from './disk.js';
import type { StoreView } from './store-view.js';
import {
  countConstellations,
  SNAPSHOT_SCHEMA,
  type NetworkSummary,
  type OutboxSummary,
  type PlatformLinkSummary,
  type ReceiverStatus,
  type StatusProvider,
  type StatusSnapshot,
  type UploadSummary,
  type MotionSummary,
} from './snapshot.js';

export interface ReceiverView {
  port: string;
  link: string;
  lastError?: string;
  bytes?: number;
  lines?: number;
  /** Monotonic ms of the last valid sentence. */
  lastSentenceMonoMs?: number;
  fixesRead?: number;
  /** Epochs whose date was corrected for the GPS week rollover. */
  rolloverCorrections?: number;
  /** Times the link was re-established after it was lost (gpsd restarts, unplugged receivers). */
  reconnects?: number;
  lastFix?: Fix;
  /** Host wall clock (ms) when lastFix was decoded: fix time vs system time. */
  lastFixWallMs?: number;
  satellites: readonly SatelliteInView[];
  health?: ReceiverHealthState;
}

export interface DaemonStatusSources {
  clock: Clock;
  dataDir: string;
  minFreeBytes?: number;
  /** Monotonic ms when the daemon started. */
  startedMonoMs: number;
  receiver?: () => ReceiverView;
  identity?: () => DeviceIdentity | undefined;
  registration?: () => RegisteredDevice | undefined;
  tokens?: () => TokenStatus;
  outbox?: () => OutboxSummary;
  upload?: () => UploadSummary;
  /** Whether the platform answers, whatever was asked (platform-link.ts). */
  platform?: () => PlatformLinkSummary;
  /** A full disk and failing commits (store-view.ts). */
  store?: () => StoreView;
  network?: () => NetworkSummary;
  motion?: () => MotionSummary;
  /**
   * What the database remembers from before this start: right after a restart the
   * uploader has delivered nothing yet and the token manager may not have loaded its pair, and
   * `status` said "last success never" and "token none" for a gateway that delivered a minute ago.
   */
  stored?: () => StoredFacts;
  /** Running in a degraded way worth a line (the header indexer turned off for a host). */
  notes?: () => string[];
  pid?: number;
}

export interface StoredFacts {
  lastSuccessAt?: number;
  lastError?: UploadSummary['lastError'];
  /** The stored token pair: when obtained (wall clock) and its lifetime. */
  token?: { obtainedAt: number; expiresInS: number };
}

export class DaemonStatusProvider implements StatusProvider {
  readonly #s: DaemonStatusSources;

  constructor(sources: DaemonStatusSources) {
    this.#s = sources;
  }

  snapshot(): StatusSnapshot {
    const s = this.#s;
    const now = s.clock.monotonicMs();
    const snapshot: StatusSnapshot = {
      schema: SNAPSHOT_SCHEMA,
      takenAt: s.clock.wallMs(),
      source: 'daemon',
      daemon: {
        running: true,
        version: VERSION,
        pid: s.pid ?? process.pid,
        uptimeS: Math.max(0, Math.round((now - s.startedMonoMs) / 1000)),
      },
      registration: {},
      outbox: pendingOnly(s.outbox?.() ?? { pending: 0, sentToday: 0, thinned: 0, deadLetters: 0 }),
      upload: s.upload?.() ?? {},
      disk: { ...diskSummary(s.dataDir, s.minFreeBytes), ...s.store?.() },
    };
    if (s.receiver) snapshot.receiver = receiverStatus(s.receiver(), now);
    if (s.platform) snapshot.platform = s.platform();
    if (s.network) snapshot.network = s.network();
    if (s.motion) snapshot.motion = s.motion();
    const notes = s.notes?.() ?? [];
    if (notes.length > 0) snapshot.notes = notes;
    const id = s.identity?.();
    const reg = s.registration?.();
    const who = reg ?? id;
    if (who)
      snapshot.registration = {
        externalSystemId: who.externalSystemId,
        externalDeviceId: who.externalDeviceId,
        externalDeviceIdSource: who.source,
      };
    if (reg) snapshot.registration.deviceUUID = reg.deviceUUID;
    const stored = s.stored?.();
    if (snapshot.upload.lastSuccessAt === undefined && stored?.lastSuccessAt !== undefined)
      snapshot.upload.lastSuccessAt = stored.lastSuccessAt;
    if (snapshot.upload.lastError === undefined && stored?.lastError !== undefined) snapshot.upload.lastError = stored.lastError;
    if (s.tokens) {
      const t = s.tokens();
      snapshot.token = { state: t.state, passwordGrants: t.passwordGrants, refreshes: t.refreshes };
      if (t.renewal !== undefined) snapshot.token.renewal = t.renewal;
      if (t.ageMs !== undefined) snapshot.token.ageS = t.ageMs / 1000;
      else if (stored?.token && (t.state === 'none' || t.state === 'expired')) {
        // Not used yet in this run: its age on the wall clock, as the database fallback tells it;
        // none when the clock is behind the token's receipt (a boot at 1970), rather than "0 s".
        const ageS = (s.clock.wallMs() - stored.token.obtainedAt) / 1000;
        if (ageS >= 0) {
          snapshot.token.ageS = ageS;
          if (t.state === 'none') snapshot.token.state = ageS < stored.token.expiresInS ? 'valid' : 'expired';
        }
      }
      if (t.retryAt !== undefined) snapshot.token.retryAt = t.retryAt;
      if (t.lastError) snapshot.token.lastError = { code: t.lastError.code, message: t.lastError.message };
    }
    return snapshot;
  }
}

/**
 * The outbox deletes delivered rows on its next commit, so for a moment its oldest row can be one
 * already delivered: with nothing pending there is no oldest pending fix (the demo showed
 * "pending 0 (oldest 68 s)" after draining a backlog).
 */
function pendingOnly(o: OutboxSummary): OutboxSummary {
  if (o.pending > 0 || o.oldestPendingAgeS === undefined) return o;
  const { oldestPendingAgeS: _stale, oldestPendingAgeBasis: _basis, ...rest } = o;
  return rest;
}

export function receiverStatus(v: ReceiverView, nowMonoMs: number): ReceiverStatus {
  const r: ReceiverStatus = {
    port: v.port,
    link: v.link,
    constellations: countConstellations(v.satellites),
    satellites: [...v.satellites],
  };
  if (v.lastError !== undefined) r.lastError = v.lastError;
  if (v.health !== undefined) r.health = v.health;
  if (v.bytes !== undefined) r.bytes = v.bytes;
  if (v.lines !== undefined) r.lines = v.lines;
  if (v.fixesRead !== undefined) r.fixesRead = v.fixesRead;
  if (v.rolloverCorrections !== undefined) r.rolloverCorrections = v.rolloverCorrections;
  if (v.reconnects !== undefined) r.reconnects = v.reconnects;
  if (v.lastSentenceMonoMs !== undefined) r.lastSentenceAgeS = Math.max(0, (nowMonoMs - v.lastSentenceMonoMs) / 1000);
  const f = v.lastFix;
  if (f) {
    r.mode = f.mode;
    r.fixTime = f.time;
    if (v.lastFixWallMs !== undefined) r.clockOffsetS = (v.lastFixWallMs - f.time) / 1000;
    if (f.lat !== undefined) r.lat = f.lat;
    if (f.lon !== undefined) r.lon = f.lon;
    if (f.altMSL !== undefined) r.altMSL = f.altMSL;
    if (f.speed !== undefined) r.speedKmh = f.speed * 3.6;
    if (f.track !== undefined) r.track = f.track;
    if (f.hdop !== undefined) r.hdop = f.hdop;
    r.satellitesUsed = f.satellitesUsed ?? v.satellites.filter((x) => x.used).length;
  }
  return r;
}
