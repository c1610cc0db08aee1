/**
 * Writes NMEA 0183 logs of a receiver standing at a known position, for `location here` tests.
 * Each epoch is RMC + GGA + GSA (the order u-blox receivers use), with valid checksums.
 */
import { sentence } from '../../src/sim/receiver/nmea-format.js';

export interface EpochSpec {
  /** GNSS time, epoch ms. */
  time: number;
  /** 1 no fix, 2 2D, 3 3D. */
  mode: 1 | 2 | 3;
  lat?: number;
  lon?: number;
  altMSL?: number;
  speedKnots?: number;
  hdop?: number;
  satellites?: number;
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

function hhmmss(t: Date): string {
  return `${pad(t.getUTCHours(), 2)}${pad(t.getUTCMinutes(), 2)}${pad(t.getUTCSeconds(), 2)}.00`;
}

function ddmmyy(t: Date): string {
  return `${pad(t.getUTCDate(), 2)}${pad(t.getUTCMonth() + 1, 2)}${pad(t.getUTCFullYear() % 100, 2)}`;
}

/** 52.1956251 -> ["5211.73751", "N"] (degrees and decimal minutes, 5 decimals: about 2 cm). */
function angle(value: number, degreeDigits: number, pos: string, neg: string): [string, string] {
  const abs = Math.abs(value);
  let deg = Math.floor(abs);
  let min = Number(((abs - deg) * 60).toFixed(5));
  if (min >= 60) {
    deg += 1;
    min -= 60;
  }
  return [`${pad(deg, degreeDigits)}${min.toFixed(5).padStart(8, '0')}`, value >= 0 ? pos : neg];
}

const USED_PRNS = ['02', '05', '12', '13', '15', '18', '20', '25', '29', '31', '32', '07'];

export function epochSentences(e: EpochSpec): string[] {
  const t = new Date(e.time);
  const hasPos = e.mode >= 2 && e.lat !== undefined && e.lon !== undefined;
  const [la, ns] = hasPos ? angle(e.lat ?? 0, 2, 'N', 'S') : ['', ''];
  const [lo, ew] = hasPos ? angle(e.lon ?? 0, 3, 'E', 'W') : ['', ''];
  const sats = e.mode === 1 ? 0 : (e.satellites ?? 9);
  const hdop = e.mode === 1 ? '' : (e.hdop ?? 0.9).toFixed(2);
  const speed = hasPos ? (e.speedKnots ?? 0.01).toFixed(2) : '';
  const rmc = sentence(`GPRMC,${hhmmss(t)},${hasPos ? 'A' : 'V'},${la},${ns},${lo},${ew},${speed},,${ddmmyy(t)},,,${hasPos ? 'A' : 'N'}`);
  const alt = e.mode === 3 ? (e.altMSL ?? 3.2).toFixed(1) : '';
  const gga = sentence(
    `GPGGA,${hhmmss(t)},${la},${ns},${lo},${ew},${hasPos ? 1 : 0},${pad(sats, 2)},${hdop},${alt},${alt === '' ? '' : 'M'},${hasPos ? '47.0' : ''},${hasPos ? 'M' : ''},,`,
  );
  const prns = USED_PRNS.slice(0, sats);
  const fields = [...prns, ...Array(12 - prns.length).fill('')].join(',');
  const gsa = sentence(`GPGSA,A,${e.mode},${fields},${e.mode === 1 ? '' : '1.60'},${hdop},${e.mode === 1 ? '' : '1.32'}`);
  return [rmc, gga, gsa];
}

const M_PER_DEG = (6_371_008.8 * Math.PI) / 180;

/** A point `east`/`north` metres from (lat, lon). */
export function offset(lat: number, lon: number, east: number, north: number): { lat: number; lon: number } {
  return { lat: lat + north / M_PER_DEG, lon: lon + east / (M_PER_DEG * Math.cos((lat * Math.PI) / 180)) };
}

export interface StationaryLogOptions {
  lat: number;
  lon: number;
  /** GNSS time of the first epoch, epoch ms. */
  start: number;
  /** Epochs without a fix first (receiver starting), then 2D ones, then 3D ones. */
  noFix?: number;
  twoD?: number;
  threeD: number;
  /**
   * Radius (m) of the scatter around the true position. Epochs come in opposite pairs
   * (bearing b and b + 180° at the same distance) so that the exact mean is the true position.
   */
  scatterM?: number;
  speedKnots?: number;
}

export function stationaryLog(o: StationaryLogOptions): string {
  const lines: string[] = [];
  let t = o.start;
  for (let i = 0; i < (o.noFix ?? 0); i++, t += 1000) lines.push(...epochSentences({ time: t, mode: 1 }));
  for (let i = 0; i < (o.twoD ?? 0); i++, t += 1000)
    lines.push(...epochSentences({ time: t, mode: 2, lat: o.lat, lon: o.lon, satellites: 3 }));
  const r = o.scatterM ?? 1.5;
  for (let i = 0; i < o.threeD; i++, t += 1000) {
    const pair = Math.floor(i / 2);
    // Distances vary between 0.5 r and r; bearings turn by 67° per pair so the cloud fills a disc.
    const dist = r * (0.5 + 0.5 * ((pair % 3) / 2));
    const bearing = ((pair * 67) % 360) * (Math.PI / 180) + (i % 2 === 1 ? Math.PI : 0);
    const p = offset(o.lat, o.lon, dist * Math.sin(bearing), dist * Math.cos(bearing));
    lines.push(
      ...epochSentences({ time: t, mode: 3, lat: p.lat, lon: p.lon, ...(o.speedKnots !== undefined ? { speedKnots: o.speedKnots } : {}) }),
    );
  }
  return `${lines.join('\r\n')}\r\n`;
}

/** The fixture's known position: the main entrance of a distribution centre in Amersfoort, NL. */
export const KNOWN_POSITION = { lat: 52.1956251, lon: 5.4126792 } as const;
export const FIXTURE_START = Date.UTC(2026, 10, 20, 8, 0, 0);

/** The exact content of test/fixtures/locations/stationary-amersfoort.nmea. */
export function knownPositionLog(): string {
  return stationaryLog({ ...KNOWN_POSITION, start: FIXTURE_START, noFix: 3, twoD: 2, threeD: 32, scatterM: 1.5 });
}
