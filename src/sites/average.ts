import type { Fix } from '../fix/fix.js';

/**
 * Averaging a stationary receiver's fixes into one surveyed point. Positions are averaged in a
 * local east/north plane around the first fix (exact enough for spreads of kilometres, and immune
 * to the ±180° longitude seam), and the spread is reported as the largest distance of any sample
 * from the average: the number a person checks against a site ("every sample within 6 m").
 */

/** Mean Earth radius (IUGG), metres: local-plane distances below 1 km are off by < 0.5 %. */
const EARTH_RADIUS_M = 6_371_008.8;
const RAD = Math.PI / 180;

export interface AveragedPosition {
  lat: number;
  lon: number;
  /** Mean altitude above mean sea level, when every sample had one. */
  altMSL?: number;
  samples: number;
  /** Largest horizontal distance of a sample from the average, metres. */
  spreadM: number;
  /** Root mean square of the horizontal distances from the average, metres. */
  rmsM: number;
  meanHdop?: number;
  /** Median speed over ground of the samples that reported one, m/s. */
  medianSpeedMps?: number;
  /** GNSS time of the first and last sample (epoch ms). */
  firstTime: number;
  lastTime: number;
}

export type PositionedFix = Fix & { lat: number; lon: number };

export function hasPosition(fix: Fix): fix is PositionedFix {
  return typeof fix.lat === 'number' && typeof fix.lon === 'number' && Number.isFinite(fix.lat) && Number.isFinite(fix.lon);
}

export function averageFixes(fixes: readonly PositionedFix[]): AveragedPosition {
  const first = fixes[0];
  if (!first) throw new RangeError('averageFixes needs at least one fix');
  const lat0 = first.lat;
  const lon0 = first.lon;
  const cos0 = Math.cos(lat0 * RAD);
  const k = EARTH_RADIUS_M * RAD; // metres per degree of latitude
  const points = fixes.map((f) => ({ x: wrapDeg(f.lon - lon0) * cos0 * k, y: (f.lat - lat0) * k }));
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const dists = points.map((p) => Math.hypot(p.x - mx, p.y - my));
  const lat = lat0 + my / k;
  const lon = wrapDeg(lon0 + mx / (cos0 * k));
  const alts = fixes.map((f) => f.altMSL).filter((a): a is number => typeof a === 'number');
  const hdops = fixes.map((f) => f.hdop).filter((h): h is number => typeof h === 'number');
  const speeds = fixes
    .map((f) => f.speed)
    .filter((s): s is number => typeof s === 'number')
    .sort((a, b) => a - b);
  return {
    lat,
    lon,
    ...(alts.length === n ? { altMSL: alts.reduce((s, a) => s + a, 0) / n } : {}),
    samples: n,
    spreadM: Math.max(...dists),
    rmsM: Math.sqrt(dists.reduce((s, d) => s + d * d, 0) / n),
    ...(hdops.length > 0 ? { meanHdop: hdops.reduce((s, h) => s + h, 0) / hdops.length } : {}),
    ...(speeds.length > 0 ? { medianSpeedMps: median(speeds) } : {}),
    firstTime: Math.min(...fixes.map((f) => f.time)),
    lastTime: Math.max(...fixes.map((f) => f.time)),
  };
}

/** Horizontal distance in metres between two nearby points (local plane; for checks and tests). */
export function localDistanceM(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const k = EARTH_RADIUS_M * RAD;
  const x = wrapDeg(lon2 - lon1) * Math.cos(((lat1 + lat2) / 2) * RAD) * k;
  const y = (lat2 - lat1) * k;
  return Math.hypot(x, y);
}

/** Degrees into [-180, 180). */
function wrapDeg(d: number): number {
  return ((((d + 180) % 360) + 360) % 360) - 180;
}

function median(sorted: readonly number[]): number {
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}
