import { VEHICLE_EVENT_KINDS, type RecordedFix, type VehicleEventKind } from '../../fix/fix.js';
import type { QueueEntry } from '../../upload/upload-queue.js';
import { formatUuid } from '../event-id.js';

/**
 * One outbox row in the compact form of migration 2 (units in the column names), and the fix it
 * stands for. Scaling: 1e-7 degrees (~1 cm) for lat/lon, cm, cm/s, centidegrees, hundredths of HDOP:
 * finer than any receiver this agent reads reports, so nothing the platform sees is lost.
 */
export interface OutboxRow {
  seq: number;
  event_id: Buffer;
  fix_time: number;
  lat_e7: number;
  lon_e7: number;
  alt_cm: number | null;
  speed_cms: number | null;
  track_cdeg: number | null;
  hdop_c: number | null;
  sats: number | null;
  flags: number;
}

/**
 * A vehicle event has no altitude: its alt_cm column holds the ignition-on time in whole seconds
 * (null without an ignition input), as its flags hold the odometer, so a location update's row stays
 * as it is.
 *
 * flags: bit 0 = transition (never thinned), bits 1..6 = thinning level (thinning.ts), bits 7..9 =
 * the vehicle event kind (0 = a location update, n = VEHICLE_EVENT_KINDS[n - 1]), and for a vehicle
 * event the odometer in whole metres from bit 10 up (below 2^43 m, inside a safe integer). Vehicle
 * events also carry the transition bit, so thinning keeps them. In flags, not a column of their
 * own: a location update's row stays as it is, byte for byte (an 11th column cost every row a
 * byte, and at a third-full page that byte decides whether thinned pages merge: +40 % file below
 * the disk floor, measured).
 */
export const FLAG_TRANSITION = 1;
const KIND_UNIT = 2 ** 7;
const KIND_COUNT = 8;
const ODOMETER_UNIT = 2 ** 10;
const MAX_ODOMETER_M = Math.floor(Number.MAX_SAFE_INTEGER / ODOMETER_UNIT);

export const ROW_COLUMNS = 'seq, event_id, fix_time, lat_e7, lon_e7, alt_cm, speed_cms, track_cdeg, hdop_c, sats, flags';

/** The vehicle event kind a row's flags name, or undefined for a location update. */
export function kindOfFlags(flags: number): VehicleEventKind | undefined {
  const n = Math.floor(flags / KIND_UNIT) % KIND_COUNT;
  return n === 0 ? undefined : VEHICLE_EVENT_KINDS[n - 1];
}

/** The odometer a vehicle event's flags carry, whole metres. */
export function odometerOfFlags(flags: number): number {
  return Math.floor(flags / ODOMETER_UNIT);
}

function kindFlags(kind: VehicleEventKind | undefined, odometerM: number | undefined): number {
  const i = kind === undefined ? -1 : VEHICLE_EVENT_KINDS.indexOf(kind);
  if (i < 0) return 0;
  const odometer = isFiniteNumber(odometerM) ? Math.min(MAX_ODOMETER_M, Math.max(0, Math.round(odometerM))) : 0;
  return odometer * ODOMETER_UNIT + (i + 1) * KIND_UNIT + FLAG_TRANSITION;
}

/** Undefined when the fix has no usable position (nothing to send as a latLonPointGeoReference). */
export function toRow(
  seq: number,
  eventId: Buffer,
  fix: Pick<RecordedFix, 'time' | 'lat' | 'lon' | 'altMSL' | 'speed' | 'track' | 'hdop' | 'satellitesUsed' | 'transition'> & {
    eventType?: VehicleEventKind;
    odometerM?: number;
    engineS?: number;
  },
): OutboxRow | undefined {
  if (!isFiniteNumber(fix.lat) || !isFiniteNumber(fix.lon) || Math.abs(fix.lat) > 90 || Math.abs(fix.lon) > 180) return undefined;
  if (!Number.isSafeInteger(fix.time)) return undefined;
  return {
    seq,
    event_id: eventId,
    fix_time: fix.time,
    lat_e7: Math.round(fix.lat * 1e7),
    lon_e7: Math.round(fix.lon * 1e7),
    alt_cm: fix.eventType !== undefined ? scaled(fix.engineS, 1) : scaled(fix.altMSL, 100),
    speed_cms: scaled(fix.speed, 100),
    track_cdeg: scaled(fix.track, 100),
    hdop_c: scaled(fix.hdop, 100),
    sats: isFiniteNumber(fix.satellitesUsed) ? Math.round(fix.satellitesUsed) : null,
    flags: fix.eventType !== undefined ? kindFlags(fix.eventType, fix.odometerM) : fix.transition ? FLAG_TRANSITION : 0,
  };
}

export function fromRow(row: OutboxRow): QueueEntry {
  const e: QueueEntry = {
    seq: row.seq,
    eventId: formatUuid(row.event_id),
    time: row.fix_time,
    lat: row.lat_e7 / 1e7,
    lon: row.lon_e7 / 1e7,
    transition: (row.flags & FLAG_TRANSITION) !== 0,
  };
  const kind = kindOfFlags(row.flags);
  if (row.alt_cm !== null && kind === undefined) e.altMSL = row.alt_cm / 100;
  if (row.speed_cms !== null) e.speed = row.speed_cms / 100;
  if (row.track_cdeg !== null) e.track = row.track_cdeg / 100;
  if (row.hdop_c !== null) e.hdop = row.hdop_c / 100;
  if (row.sats !== null) e.satellitesUsed = row.sats;
  if (kind !== undefined) {
    e.eventType = kind;
    e.odometerM = odometerOfFlags(row.flags);
    if (row.alt_cm !== null) e.engineS = row.alt_cm;
  }
  return e;
}

function scaled(v: number | undefined, factor: number): number | null {
  return isFiniteNumber(v) ? Math.round(v * factor) : null;
}

function isFiniteNumber(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

/** Ascending runs of consecutive seqs, [first, last] each: a drain deletes thousands with a few statements. */
export function seqRuns(seqs: number[]): [number, number][] {
  const sorted = seqs.slice().sort((a, b) => a - b);
  const runs: [number, number][] = [];
  for (const seq of sorted) {
    const last = runs[runs.length - 1];
    if (last && seq === last[1] + 1) last[1] = seq;
    else runs.push([seq, seq]);
  }
  return runs;
}

/** Index of `seq` in rows whose seqs ascend (the outbox's memory buffer), or -1: binary search. */
export function indexOfSeq(rows: readonly OutboxRow[], seq: number): number {
  let lo = 0;
  let hi = rows.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const s = rows[mid]!.seq;
    if (s === seq) return mid;
    if (s < seq) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}
