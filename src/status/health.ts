/**
 * The health rules behind `status`'s exit code, in one place: 0 healthy, 1 degraded (working, but
 * a technician should look: no fix, a backlog, a token being refreshed), 2 failing or not running.
 */
import type { StatusSnapshot, UploadSummary } from './snapshot.js';
import { DATA_DIR_FAULT_WORDS } from '../system/data-dir-fault.js';
import { antennaAdvice, JAMMING_ADVICE } from '../gnss/health/receiver-health.js';

export type HealthLevel = 'healthy' | 'degraded' | 'failing';

export interface Health {
  level: HealthLevel;
  exitCode: 0 | 1 | 2;
  /** One short reason per finding, worst first. */
  reasons: string[];
}

export interface HealthThresholds {
  /** No sentence for this long: the receiver is silent. */
  silentReceiverS: number;
  /** Undelivered fixes older than this: the backlog is not draining. */
  backlogAgeS: number;
  /** Host clock and GNSS time further apart than this. */
  clockOffsetS: number;
}

/** A salvaged database is shown for a day: long enough for a technician's next look. */
const REPAIRED_SHOWN_MS = 86_400_000;

export const DEFAULT_THRESHOLDS: HealthThresholds = { silentReceiverS: 10, backlogAgeS: 120, clockOffsetS: 5 };

export function assessHealth(s: StatusSnapshot, t: HealthThresholds = DEFAULT_THRESHOLDS): Health {
  const failing: string[] = [];
  const degraded: string[] = [];
  if (!s.daemon.running) failing.push('daemon not running');

  const errorIsCurrent = errorAfterSuccess(s.upload);
  const tlsClock = s.daemon.running && tlsClockFailing(s, errorIsCurrent);
  const r = s.receiver;
  if (s.daemon.running && r) {
    if (r.link !== 'open' && r.link !== 'ended')
      (r.link === 'retrying' ? degraded : failing).push(`receiver link ${r.link}${r.lastError ? ` (${r.lastError})` : ''}`);
    if (r.lastSentenceAgeS === undefined) failing.push('no NMEA from the receiver yet');
    else if (r.lastSentenceAgeS > t.silentReceiverS && r.link !== 'ended')
      failing.push(`receiver silent for ${Math.round(r.lastSentenceAgeS)} s`);
    if (r.mode === undefined || r.mode < 2) degraded.push('no fix');
    const rh = r.health;
    if (rh && (rh.antenna === 'OPEN' || rh.antenna === 'SHORT'))
      degraded.push(`GNSS antenna ${rh.antenna.toLowerCase()}: ${antennaAdvice(rh.antenna)}`);
    if (rh?.jamming.state === 'suspected') degraded.push(`GNSS jamming suspected (${rh.jamming.reason ?? ''}): ${JAMMING_ADVICE}`);
    if (r.clockOffsetS !== undefined && Math.abs(r.clockOffsetS) > t.clockOffsetS) {
      const words = `system clock ${r.clockOffsetS > 0 ? 'ahead of' : 'behind'} GNSS by ${formatAge(Math.abs(r.clockOffsetS))}`;
      // TLS judges certificates by this clock: with it wrong, the platform cannot be reached.
      if (tlsClock) failing.push(`${words}: TLS certificate checks fail until it is set`);
      else degraded.push(words);
    }
  }
  if (tlsClock && !failing.some((f) => f.startsWith('system clock')))
    failing.push(
      "TLS refuses the platform's certificate by the system clock's date (PLATFORM_TLS_CLOCK): set the clock; no GNSS time yet to tell by how much",
    );

  const token = s.token;
  if (token?.state === 'rejected') failing.push('credentials rejected by the platform');
  else if (token && s.daemon.running && token.state !== 'valid' && !waitsForRequest(token)) degraded.push(`token ${token.state}`);

  if (s.daemon.running && !s.registration.deviceUUID) degraded.push('device not registered yet');
  if (!s.daemon.running && !s.registration.deviceUUID) failing.push('device never registered');

  const fault = s.upload.fault;
  if (fault) failing.push(`platform answers HTTP ${fault.status ?? '?'} to every event: check platform.eventsPath, proxy, event shape`);
  // A link failing for the clock is said once above, with the clock's offset.
  const link = s.daemon.running && !tlsClock ? platformLinkReason(s) : undefined;
  if (link) degraded.push(link);
  const err = s.upload.lastError;
  // A transient upload error while the link fails is the same finding, said once above with its cause.
  const sameAsLink = s.platform?.failing !== undefined && err?.class !== 'config';
  if (err && errorIsCurrent && !fault && !sameAsLink && !(tlsClock && err.code === 'PLATFORM_TLS_CLOCK'))
    (err.class === 'config' ? failing : degraded).push(`upload failing: ${err.code} (${err.class})`);
  // Whatever else is said of the link: the upload itself has moved nothing for two deadlines.
  const stalled = s.upload.stalled;
  if (s.daemon.running && stalled && !fault && !tlsClock)
    degraded.push(`upload stalled for ${formatAge(stalled.forS)}: waiting for ${stalled.waitingFor}`);
  if ((s.outbox.oldestPendingAgeS ?? 0) > t.backlogAgeS)
    degraded.push(`backlog of ${s.outbox.pending} fixes, oldest ${formatAge(s.outbox.oldestPendingAgeS ?? 0)}`);

  if (s.daemon.running && s.motion?.ignitionFault)
    degraded.push(`ignition input not read: ${s.motion.ignitionFault}; no engine events until it is`);
  if (s.daemon.running && s.motion?.ignitionUnstable) degraded.push(s.motion.ignitionUnstable);
  // Lost for good (the outbox logs each one): the platform will never have these trips or engine changes.
  const refused = s.outbox.eventsRefused ?? 0;
  if (refused > 0)
    degraded.push(
      refused === 1
        ? '1 trip/engine event could not be stored and is lost: see the log'
        : `${refused} trip/engine events could not be stored and are lost: see the log`,
    );

  const d = s.disk;
  const held = d.heldInMemory ? `, ${d.heldInMemory} fixes held in memory` : '';
  const failingFor = d.commitFailing ? `, commits failing for ${formatAge(d.commitFailing.forS)}` : '';
  if (d.databaseUnusable) failing.push(`database unusable: ${d.databaseUnusable}${held}`);
  else if (d.readOnly)
    failing.push(
      `read-only data directory: ${DATA_DIR_FAULT_WORDS['read-only']}${held}${failingFor}; nothing is stored until it is remounted read-write (mount -o remount,rw), then the agent stores what it holds without a restart`,
    );
  else if (d.full) failing.push(`disk full${held}${failingFor}; delivery goes on and frees room`);
  else if (d.commitFailing)
    failing.push(
      `outbox cannot commit: ${d.commitFailing.reason ? `${d.commitFailing.reason} (${d.commitFailing.code})` : d.commitFailing.code}${held}${failingFor}`,
    );
  const rep = d.repaired;
  if (rep && s.takenAt - rep.at < REPAIRED_SHOWN_MS)
    degraded.push(
      `database was damaged (${rep.reason.split(':')[0]}) ${formatAge(Math.max(0, (s.takenAt - rep.at) / 1000))} ago: ${rep.salvaged} fixes salvaged, about ${rep.unreadable} lost; damaged file kept at ${rep.movedTo}`,
    );
  if (!d.full && d.freeBytes !== undefined && d.minFreeBytes !== undefined && d.freeBytes < d.minFreeBytes)
    failing.push('disk below storage.minFreeBytes: the outbox takes at most a quarter of what is left, then thins the backlog');

  if (failing.length > 0) return { level: 'failing', exitCode: 2, reasons: [...failing, ...degraded] };
  if (degraded.length > 0) return { level: 'degraded', exitCode: 1, reasons: degraded };
  return { level: 'healthy', exitCode: 0, reasons: [] };
}

/**
 * Whether the last upload error came after the last success. Within a run both carry
 * ages on the daemon's monotonic clock, which a clock set from 1970 to now does not move; only
 * stamps from before this start (the database's) are compared on the wall clock.
 */
export function errorAfterSuccess(u: UploadSummary): boolean {
  const err = u.lastError;
  if (!err) return false;
  if (u.lastSuccessAt === undefined && u.lastSuccessAgeS === undefined) return true;
  // This run's error is newer than any success from before this start.
  if (err.ageS !== undefined) return u.lastSuccessAgeS === undefined || err.ageS < u.lastSuccessAgeS;
  if (u.lastSuccessAgeS !== undefined) return false;
  return (err.at ?? 0) > (u.lastSuccessAt ?? 0);
}

/** TLS refuses the platform's certificate by date now: the upload's current error, the failing link, or the token's error. */
function tlsClockFailing(s: StatusSnapshot, uploadErrorIsCurrent: boolean): boolean {
  const code = 'PLATFORM_TLS_CLOCK';
  return (
    (uploadErrorIsCurrent && s.upload.lastError?.code === code) ||
    s.platform?.failing?.code === code ||
    (s.token !== undefined && s.token.state !== 'valid' && s.token.lastError?.code === code)
  );
}

/**
 * The platform link: the newest attempt failed, or no answer came within the interval
 * a working link answers in. A parked vehicle with an empty outbox is HEALTHY only while that holds.
 */
export function platformLinkReason(s: StatusSnapshot): string | undefined {
  const p = s.platform;
  if (!p) return undefined;
  if (p.failing) return `${failingFor(p.failing)} (since ${clockTime(p.failing.since)}): ${p.failing.message}`;
  if (p.expectedIntervalS === undefined) return undefined;
  const every = `a working link answers at least every ${formatAge(p.expectedIntervalS)}`;
  if (p.lastAnswerAgeS !== undefined)
    return p.lastAnswerAgeS > p.expectedIntervalS
      ? `no answer from the platform for ${formatAge(p.lastAnswerAgeS)} (since ${clockTime(p.lastAnswerAt)}; ${every})`
      : undefined;
  const up = s.daemon.uptimeS ?? 0;
  return up > p.expectedIntervalS ? `no answer from the platform since the agent started ${formatAge(up)} ago (${every})` : undefined;
}

/** A wall-clock instant as the technician's log shows it: HH:MM:SS UTC (display only). */
function clockTime(wallMs: number | undefined): string {
  return wallMs === undefined ? '?' : `${new Date(wallMs).toISOString().slice(11, 19)} UTC`;
}

export function formatAge(seconds: number): string {
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min`;
  if (seconds < 48 * 3600) return `${(seconds / 3600).toFixed(1)} h`;
  return `${Math.round(seconds / 86400)} d`;
}

/**
 * How the platform fails, for how long: an HTTP error is an answer ("answers HTTP 503 for 46 s"),
 * a timeout or a refused connection is none ("not answering for 46 s").
 */
export function failingFor(f: { forS: number; status?: number }): string {
  return f.status !== undefined
    ? `platform answers HTTP ${f.status} for ${formatAge(f.forS)}`
    : `platform not answering for ${formatAge(f.forS)}`;
}

/** Parked: an access token that lapsed with no request to renew it is the plan, not a fault. */
function waitsForRequest(token: NonNullable<StatusSnapshot['token']>): boolean {
  return token.state === 'expired' && token.renewal === 'next-request' && token.lastError === undefined;
}
