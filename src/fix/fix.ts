/**
 * One fix, from the receiver to the platform, with one name per stage:
 *
 *   Fix                  the GNSS pipeline's epoch (src/gnss/): what the receiver said, nothing invented
 *   RecordedFix          a Fix the recording policy kept (src/gnss/recording-policy.ts), to the FixSink
 *   QueuedFix            a recorded fix with the event id it got at record time, as the outbox keeps it
 *                        (src/store/outbox/row.ts stores it in SQLite's compact columns, OutboxRow)
 *   QueueEntry           a QueuedFix with its place in the upload queue (src/upload/upload-queue.ts)
 *   LocationUpdateEvent  the OTM5 event made from a QueuedFix (src/platform/otm5/event.ts)
 *   VehicleEvent         a movement or engine change (src/motion/), queued beside the fixes with its `eventType`
 *
 * Units are in the names or documented here; an absent field means the receiver did not say
 * (never 0: a course of 0 and an unknown course are different facts).
 */

/** One satellite the receiver reports in view (from GSV), marked used when a GSA lists it. */
export interface SatelliteInView {
  /** 'GPS' | 'GLONASS' | 'Galileo' | 'BeiDou' | 'QZSS' | 'NavIC' | 'SBAS' | 'unknown'. */
  constellation: string;
  /** The satellite number as the receiver sent it (NMEA id, e.g. 65..96 for GLONASS). */
  id: number;
  elevation?: number;
  azimuth?: number;
  /** C/N0 in dB-Hz; absent when the receiver does not track it. */
  snr?: number;
  used: boolean;
  /** NMEA 4.10 signal id (e.g. 1 = GPS L1 C/A, 7 = Galileo E1); absent before NMEA 4.10. */
  signalId?: number;
}

/** Fix modes as gpsd reports them. */
export type FixMode = 1 | 2 | 3;

export interface Fix {
  /** Epoch milliseconds, UTC, from the receiver (never the host clock). */
  time: number;
  /** 1 no fix, 2 2D, 3 3D (as gpsd). */
  mode: FixMode;
  lat?: number;
  lon?: number;
  /** Altitude above mean sea level, metres. */
  altMSL?: number;
  /** Speed over ground, m/s. */
  speed?: number;
  /** Course over ground, degrees true. */
  track?: number;
  /**
   * Speed and course were derived from the previous position (a GGA-only receiver), not measured by
   * Doppler: at 10 Hz a standing receiver's 1-2 m of jitter reads as several m/s, so motion reads none.
   */
  speedDerived?: true;
  satellitesUsed?: number;
  hdop?: number;
  pdop?: number;
  vdop?: number;
  /** GGA fix quality (0 invalid, 1 GPS, 2 DGPS, 4 RTK fixed, 5 RTK float, 6 dead reckoning, ...). */
  quality?: number;
  satellites?: SatelliteInView[];
}

/** A fix the recording policy chose to keep, as the store persists it. */
export type RecordedFix = Fix & {
  /** True at a moving/stopped transition (kept when the outbox is thinned). */
  transition?: boolean;
  /**
   * Which rule recorded it: 'first', 'interval', 'heartbeat', 'stopped', 'all'; path: 'path', 'stop',
   * 'departure', 'creep', 'gap', 'last'; adaptive: 'distance', 'heading', 'speed', 'moving'.
   */
  reason?: string;
};

/** Where recorded fixes go (the store's outbox in the agent, an array in tests). */
export interface FixSink {
  record(fix: RecordedFix): void;
}

export const KNOTS_TO_MPS = 1852 / 3600;

/**
 * A recorded fix as the outbox keeps it, with the event id fixed at record time (the idempotency
 * key of its OTM5 event): what the OTM5 mapping needs, positions at the outbox's precision.
 */
export interface QueuedFix {
  eventId: string;
  /** Epoch ms UTC from the receiver. */
  time: number;
  lat: number;
  lon: number;
  /** Metres above mean sea level. */
  altMSL?: number;
  /** Speed over ground, m/s. */
  speed?: number;
  /** Course over ground, degrees true. */
  track?: number;
  hdop?: number;
  satellitesUsed?: number;
  /** A movement or engine event rather than a location update (absent for every recorded fix). */
  eventType?: VehicleEventKind;
  /** The odometer at the event, whole metres (vehicle events only). */
  odometerM?: number;
  /** Ignition-on time at the event, whole seconds (vehicle events with an ignition input only). */
  engineS?: number;
}

/** The OTM5 eventTypes of a vehicle's day, made on the device from the full-rate fixes and the ignition. */
export const VEHICLE_EVENT_KINDS = ['startMovingEvent', 'stopMovingEvent', 'startEngineEvent', 'stopEngineEvent'] as const;
export type VehicleEventKind = (typeof VEHICLE_EVENT_KINDS)[number];

/** A movement or engine change as the outbox takes it: when (GNSS), where, and the odometer then. */
export interface VehicleEvent {
  eventType: VehicleEventKind;
  /** Epoch ms UTC from GNSS: when the vehicle stopped, started, or the ignition changed. */
  time: number;
  lat: number;
  lon: number;
  /** Whole metres. */
  odometerM: number;
  /** Ignition-on time, whole seconds (absent without an ignition input). */
  engineS?: number;
}

/**
 * A state written in the same transaction as the rows it goes with (the motion state beside the
 * vehicle event that changed it): a power cut leaves both or neither. Data, not a closure, so that it
 * can be carried into another database with the rows when the store is swapped.
 */
export interface StateWrite {
  /** The meta key. */
  key: string;
  /** Stored as JSON. */
  value: unknown;
}

/**
 * A state that changes between events (the odometer while driving): the outbox writes it with each
 * commit when it is due, once every row of an event made before it is in the same transaction.
 */
export interface StateSource {
  /**
   * The state to write now, if it changed enough since the last one committed. `alone`: nothing
   * else is to be committed, so the write would cost a transaction of its own.
   */
  due(alone?: boolean): StateWrite | undefined;
  /** That write was committed. */
  committed(write: StateWrite): void;
}
