/**
 * What `telematics-agent status` shows, as one JSON object: served by the running daemon on its
 * status socket, or read from the database when the daemon is down (then `source` is 'database'
 * and the live sections are absent). Durations are seconds, instants are epoch ms (wall clock,
 * display only); secrets never appear: the token section has its state and age, not the token.
 */
import type { SatelliteInView } from '../fix/fix.js';
import type { ErrorClass } from '../errors.js';
import type { ReceiverHealthState } from '../gnss/health/receiver-health.js';

export const SNAPSHOT_SCHEMA = 1;

export interface ConstellationCount {
  constellation: string;
  inView: number;
  used: number;
}

export interface ReceiverStatus {
  /** Serial device or replay file. */
  port: string;
  /** 'open' | 'opening' | 'retrying' | 'closed' | 'ended' (replay finished). */
  link: string;
  lastError?: string;
  bytes?: number;
  lines?: number;
  /** Seconds since the last valid sentence; absent when none arrived yet. */
  lastSentenceAgeS?: number;
  /** Fixes decoded since start (before the quality gate). */
  fixesRead?: number;
  /** Epochs whose date was moved forward by 1024 weeks (GPS week rollover of old firmware). */
  rolloverCorrections?: number;
  /** Times the link came back after it was lost (gpsd restarted, receiver replugged). */
  reconnects?: number;
  /** 1 none, 2 2D, 3 3D; absent before the first epoch. */
  mode?: 1 | 2 | 3;
  /** GNSS time of the last fix (epoch ms UTC). */
  fixTime?: number;
  /** System clock minus GNSS time of the last fix, seconds, corrected for the fix's age. */
  clockOffsetS?: number;
  lat?: number;
  lon?: number;
  altMSL?: number;
  /** km/h */
  speedKmh?: number;
  track?: number;
  hdop?: number;
  satellitesUsed?: number;
  constellations: ConstellationCount[];
  /** Antenna, signal strength (top-4 C/N0) and jamming, from the daemon. */
  health?: ReceiverHealthState;
  /** The satellite table for `--watch`. */
  satellites?: SatelliteInView[];
}

export interface RegistrationStatus {
  externalSystemId?: string;
  externalDeviceId?: string;
  /** Where externalDeviceId came from: config, system-serial, machine-id, ... */
  externalDeviceIdSource?: string;
  deviceUUID?: string;
  registeredAt?: number;
}

export interface TokenSummary {
  state: 'none' | 'valid' | 'refreshing' | 'expired' | 'rejected';
  ageS?: number;
  /** 'next-request': no request used the token lately (parked), the next one renews it. */
  renewal?: 'ahead' | 'next-request';
  retryAt?: number;
  lastError?: { code: string; message: string };
  passwordGrants: number;
  refreshes: number;
}

/** What an age was measured against: the receiver's GNSS time, or the host's clock (which can be wrong at boot). */
export type AgeBasis = 'gnss' | 'host clock';

export interface OutboxSummary {
  pending: number;
  /**
   * Age of the oldest undelivered fix, seconds: now minus its GNSS time, "now" being the receiver's
   * current GNSS time (its last epoch advanced by the monotonic clock) when it gave one in this
   * run, else the host clock (`oldestPendingAgeBasis`).
   */
  oldestPendingAgeS?: number;
  oldestPendingAgeBasis?: AgeBasis;
  sentToday: number;
  sentTotal?: number;
  thinned: number;
  deadLetters: number;
  /** The newest dead letter: when, the platform's status and why (the platform's words). */
  lastDeadLetter?: { at: number; status?: number; reason: string };
  /** Fixes recorded (kept by the recording policy) since start, when the daemon knows. */
  recorded?: number;
  /**
   * Vehicle events (trips, engine) the outbox could not store, ever (a counter in the database):
   * lost, each with a warning in the log. Absent when unknown.
   */
  eventsRefused?: number;
}

export interface UploadSummary {
  /** Wall ms (display only: the clock may have been stepped since). */
  lastSuccessAt?: number;
  /**
   * Seconds since the last delivery of this run, on the daemon's monotonic clock: a
   * clock set from 1970 to now in between does not make it 56 years. Absent when the last success
   * is from before this start (then only the wall stamp is known, and its age is on the host clock).
   */
  lastSuccessAgeS?: number;
  /** ageS: seconds since, on the monotonic clock, when the error is from this run. */
  lastError?: { code: string; class: ErrorClass | string; message: string; at?: number; ageS?: number };
  /** Free-form lane facts from the uploader (live, backlog). */
  lanes?: Record<string, unknown>;
  /**
   * The backlog's drain: requests allowed in flight and their ceiling, backlog events
   * delivered per second (last 30 s), and why no faster: pushback (429/503), latency (the
   * platform's queue grows), link (timeouts, drops), ceiling, rate-ceiling, or growing.
   */
  drain?: { window: number; ceiling: number; limit: string; ratePerS: number; baseLatencyMs?: number; latencyMs?: number };
  /** The platform refuses every event: the status, since when, and what to check. */
  fault?: { kind: string; status?: number; code: string; message: string; hint: string; since: number; forS?: number };
  /**
   * Fixes wait and no event was delivered or refused for `forS`, at least twice the request
   * deadline (a server that takes the connection but not the requests), and what the upload waits for.
   */
  stalled?: { forS: number; waitingFor: string };
}

/**
 * Whether the platform answers, whichever service was asked: with an empty outbox
 * nothing is uploaded for up to the parked heartbeat, so the upload section alone cannot tell.
 * Ages on the daemon's monotonic clock; instants are wall ms, display only.
 */
export interface PlatformLinkSummary {
  /** Seconds since the platform last answered; absent before its first answer in this run. */
  lastAnswerAgeS?: number;
  lastAnswerAt?: number;
  /** The newest attempt failed: its error (what was asked and why it failed), since when, for how long. */
  failing?: { message: string; since: number; forS: number; code?: string; status?: number };
  /**
   * A working link answers at least this often: the parked heartbeat while the receiver has a fix,
   * the token renewal while a token is held, whichever comes first, plus a margin. Absent when
   * nothing is due (no fix to send and no token to renew).
   */
  expectedIntervalS?: number;
}

/**
 * Bytes of the platform connections as the SIM card pays them (counted at the TCP socket, TLS
 * handshakes included), per UTC day and month of the host's wall clock (display only).
 */
export interface NetworkSummary {
  /** Protocol of the newest platform connection (h2 or http/1.1); absent before the first one. */
  protocol?: string;
  day: string;
  today: { sent: number; received: number };
  month: string;
  thisMonth: { sent: number; received: number };
  /** Connections opened since the daemon started (live daemon only). */
  connections?: number;
}

export interface DiskSummary {
  dataDir: string;
  databaseBytes?: number;
  freeBytes?: number;
  /** storage.minFreeBytes: below it the outbox takes at most a quarter of what is left, then thins. */
  minFreeBytes?: number;
  /** The disk is full (SQLITE_FULL/ENOSPC met, statfs has not shown room since); daemon only. */
  full?: boolean;
  /** Wall ms when it was found full. */
  fullSince?: number;
  /** Recorded fixes held in memory, not yet committed. */
  heldInMemory?: number;
  /** The outbox's commits fail: the error and for how long (seconds). */
  /** reason: what the file system says, in words ("the data directory's filesystem is read-only"). */
  commitFailing?: { code: string; message: string; forS: number; reason?: string };
  /** The data directory's file system is mounted read-only: nothing can be stored. */
  readOnly?: boolean;
  /** agent.db is not a database file (a directory...): the sentence naming it and the fix. */
  databaseUnusable?: string;
  /** Whether the ballast file (storage.ballastBytes) is in place. */
  ballast?: boolean;
  /** The last salvage of a damaged database file (health shows it for a day). */
  repaired?: { at: number; reason: string; movedTo: string; salvaged: number; deadLetters: number; unreadable: number };
}

export interface MotionSummary {
  state: 'moving' | 'stopped' | 'unknown';
  /** ISO time (GNSS) of the last change; absent while unknown. */
  since?: string;
  odometerM: number;
  /** 'unknown': configured but not readable now (ignitionFault says why). */
  ignition: 'on' | 'off' | 'not wired' | 'unknown';
  ignitionFault?: string;
  /** Read, but flapping or its gpiomon ending again and again: engine events held or edges missed (the sentence). */
  ignitionUnstable?: string;
  /**
   * Ignition-on time, hours (one decimal); absent without an ignition input. With the daemon
   * stopped: the stored count, or an installer's `engine-hours set` not applied yet.
   */
  engineHours?: number;
  /** Impossible position steps left out of the odometer and the trips since the daemon started (live only). */
  positionJumps?: number;
  /**
   * Read from the database with the daemon stopped: the state it stored when it last ran (at its
   * last stop or shutdown; a crash loses the distance since the last stop), not a live one.
   */
  lastKnown?: true;
}

export interface StatusSnapshot {
  schema: typeof SNAPSHOT_SCHEMA;
  /** Host wall clock when the snapshot was taken (epoch ms). */
  takenAt: number;
  source: 'daemon' | 'database';
  daemon: { running: boolean; version: string; pid?: number; uptimeS?: number };
  receiver?: ReceiverStatus;
  registration: RegistrationStatus;
  token?: TokenSummary;
  outbox: OutboxSummary;
  upload: UploadSummary;
  /** Daemon only. */
  platform?: PlatformLinkSummary;
  network?: NetworkSummary;
  disk: DiskSummary;
  /** The vehicle's movement, odometer and ignition (src/motion); absent with motion.enabled false. */
  motion?: MotionSummary;
  /** Why some facts are missing (e.g. the database could not be read). */
  notes?: string[];
}

/** What the status server asks for each request. */
export interface StatusProvider {
  snapshot(): StatusSnapshot | Promise<StatusSnapshot>;
}

/** Per-constellation counts from the satellites in view. */
export function countConstellations(satellites: readonly SatelliteInView[]): ConstellationCount[] {
  const by = new Map<string, ConstellationCount>();
  for (const s of satellites) {
    const c = by.get(s.constellation) ?? { constellation: s.constellation, inView: 0, used: 0 };
    c.inView++;
    if (s.used) c.used++;
    by.set(s.constellation, c);
  }
  const order = ['GPS', 'GLONASS', 'Galileo', 'BeiDou', 'QZSS', 'NavIC', 'SBAS', 'unknown'];
  return [...by.values()].sort((a, b) => order.indexOf(a.constellation) - order.indexOf(b.constellation));
}
