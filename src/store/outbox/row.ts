import type { RecordedFix } from '../../fix/fix.js';
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

export const FLAG_TRANSITION = 1;

export const ROW_COLUMNS = 'seq, event_id, fix_time, lat_e7, lon_e7, alt_cm, speed_cms, track_cdeg, hdop_c, sats, flags';

/** Undefined when the fix has no usable position (nothing to send as a latLonPointGeoReference). */
export function toRow(seq: number, eventId: Buffer, fix: RecordedFix): OutboxRow | undefined {
  if (!isFiniteNumber(fix.lat) || !isFiniteNumber(fix.lon) || Math.abs(fix.lat) > 90 || Math.abs(fix.lon) > 180) return undefined;
  if (!Number.isSafeInteger(fix.time)) return undefined;
  return {
    seq,
    event_id: eventId,
    fix_time: fix.time,
    lat_e7: Math.round(fix.lat * 1e7),
    lon_e7: Math.round(fix.lon * 1e7),
    alt_cm: scaled(fix.altMSL, 100),
    speed_cms: scaled(fix.speed, 100),
    track_cdeg: scaled(fix.track, 100),
    hdop_c: scaled(fix.hdop, 100),
    sats: isFiniteNumber(fix.satellitesUsed) ? Math.round(fix.satellitesUsed) : null,
    flags: fix.transition ? FLAG_TRANSITION : 0,
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
  if (row.alt_cm !== null) e.altMSL = row.alt_cm / 100;
  if (row.speed_cms !== null) e.speed = row.speed_cms / 100;
  if (row.track_cdeg !== null) e.track = row.track_cdeg / 100;
  if (row.hdop_c !== null) e.hdop = row.hdop_c / 100;
  if (row.sats !== null) e.satellitesUsed = row.sats;
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
