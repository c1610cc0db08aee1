/**
 * The synthetic receiver: a multi-minute drive as the NMEA text a modern multi-GNSS receiver
 * (u-blox M9 class, NMEA 4.11) would send for it. Everything follows from the seed and the start
 * time, which is GNSS time: the host clock is never read, so the same options give the same bytes.
 */
import { seededRandom } from '../random.js';
import { gga, gsa, gsv, rmc, vtg, zda, type EpochFacts } from './nmea-format.js';
import { driveRoute, fitRoute, planRoute, type Leg, type Phase, type TruthSample } from './route.js';
import { CONSTELLATIONS, SyntheticSky } from './sky.js';
import { antennaAt, impairSky, type AntennaChange, type AntennaWord, type Impairment } from './impairments.js';
import { sentence } from './nmea-format.js';

export interface DriveOptions {
  /** Length of the drive, minutes (default 10). */
  minutes?: number;
  /** Epochs per second, 1..10 (default 1). */
  hz?: number;
  seed?: number;
  /** GNSS time of the first epoch, epoch ms UTC (default 2026-11-22T08:00:00Z). */
  startTimeMs?: number;
  /** Where the drive starts (default: a street in Utrecht, NL). */
  start?: { lat: number; lon: number };
  /** The depot park lasts at least this long, s (default: a quarter of the drive). */
  depotMinS?: number;
  /** The legs to drive instead of the planned city / depot / highway route (`minutes` is then ignored). */
  legs?: Leg[];
  /** Tunnels, canyons, car parks, fading and interference on top of the route's sky (impairments.ts). */
  impairments?: Impairment[];
  /** The antenna's changes of state; with them the drive starts with u-blox's TXT notices (INIT, then the state). */
  antenna?: AntennaChange[];
}

export interface PhaseSpan {
  phase: Phase;
  /** Seconds since the start, inclusive / exclusive. */
  from: number;
  to: number;
}

export interface SyntheticDrive {
  /** NMEA sentences in order, without line endings. */
  lines: string[];
  /** The true vehicle state at each epoch (before receiver noise). */
  truth: TruthSample[];
  legs: Leg[];
  /** Consecutive stretches of the same phase, in order. */
  phases: PhaseSpan[];
  epochs: number;
  startTimeMs: number;
  hz: number;
}

export const DEFAULT_DRIVE_START_MS = Date.UTC(2026, 10, 22, 8, 0, 0);
const DEFAULT_START = { lat: 52.0907, lon: 5.1214 };
const EARTH_RADIUS_M = 6_371_008.8;

export function generateDrive(options: DriveOptions = {}): SyntheticDrive {
  const minutes = options.minutes ?? 10;
  const hz = options.hz ?? 1;
  if (!(minutes > 0 && minutes <= 24 * 60)) throw new RangeError(`minutes must be in (0, 1440], got ${minutes}`);
  if (!Number.isInteger(hz) || hz < 1 || hz > 10) throw new RangeError(`hz must be an integer from 1 to 10, got ${hz}`);
  const seed = options.seed ?? 1;
  const startTimeMs = options.startTimeMs ?? DEFAULT_DRIVE_START_MS;
  const random = seededRandom(seed);
  const start = options.start ?? DEFAULT_START;
  const legs =
    options.legs ??
    fitRoute(
      planRoute({ minutes, random, ...(options.depotMinS !== undefined ? { depotMinS: options.depotMinS } : {}) }),
      minutes * 60,
      start,
      hz,
    );
  // A route that runs over (its fixed parks alone are longer) is cut at the requested length.
  const planned = driveRoute(legs, start, hz);
  const truth = options.legs ? planned : planned.slice(0, Math.round(minutes * 60 * hz));
  const sky = new SyntheticSky(seededRandom(seed ^ 0x5a5a5a5a));
  const noise = seededRandom(seed ^ 0x3c3c3c3c);
  const lines: string[] = [];
  // Receiver position error: a slow random walk of a metre or so, larger when parked (multipath
  // off the depot buildings), so a parked vehicle "jitters" as real ones do.
  let errN = 0;
  let errE = 0;
  const impairments = options.impairments ?? [];
  const antennaChanges = options.antenna ?? [];
  let antennaSaid: AntennaWord | undefined;
  for (let i = 0; i < truth.length; i++) {
    const s = truth[i];
    if (!s) continue;
    const antenna = antennaAt(antennaChanges, s.t);
    if (options.antenna !== undefined && antenna !== antennaSaid) {
      if (antennaSaid === undefined) lines.push(sentence('GNTXT,01,01,02,ANTSTATUS=INIT'));
      lines.push(sentence(`GNTXT,01,01,02,ANTSTATUS=${antenna}`));
      antennaSaid = antenna;
    }
    const wholeSecond = i % hz === 0;
    const parked = s.speedMps === 0;
    const walk = parked ? 0.6 : 0.25;
    errN = errN * 0.9 + (noise() - 0.5) * walk;
    errE = errE * 0.9 + (noise() - 0.5) * walk;
    const sats = impairSky(sky.at(s.t, s.phase === 'highway' ? 0 : s.phase === 'depot' ? 0.4 : 0.2), s.t, impairments, antenna);
    const used = sats.filter((x) => x.used).length;
    const hdop = Math.max(0.5, 0.35 + 9 / Math.max(used, 4)) + noise() * 0.05;
    const facts: EpochFacts = {
      timeMs: startTimeMs + Math.round(s.t * 1000),
      lat: s.lat + (errN / EARTH_RADIUS_M) * (180 / Math.PI),
      lon: s.lon + (errE / (EARTH_RADIUS_M * Math.cos((s.lat * Math.PI) / 180))) * (180 / Math.PI),
      altMSL: 4 + Math.sin(s.t / 120) * 2 + noise() * 0.3,
      // Doppler speed of a parked receiver is a few cm/s, never exactly zero.
      speedMps: parked ? noise() * 0.05 : Math.max(0, s.speedMps + (noise() - 0.5) * 0.1),
      track: parked ? undefined : s.heading,
      hdop,
      pdop: hdop * 1.7,
      vdop: hdop * 1.4,
      satellitesUsed: used,
    };
    // ZDA first in the epoch (every tenth second): it is timed, so it opens the epoch and never
    // changes which sentence ends one.
    if (wholeSecond && Math.round(s.t) % 10 === 0) lines.push(zda(facts.timeMs));
    lines.push(rmc(facts), vtg(facts), gga(facts));
    for (const c of CONSTELLATIONS) {
      lines.push(
        gsa(
          sats.filter((x) => x.constellation === c && x.used).map((x) => x.id),
          facts,
          c.systemId,
        ),
      );
    }
    // Receivers at 5-10 Hz send GSV once a second; the sky does not change faster.
    if (wholeSecond) {
      for (const c of CONSTELLATIONS)
        lines.push(
          ...gsv(
            c.talker,
            sats.filter((x) => x.constellation === c),
            c.signalId,
          ),
        );
    }
  }
  return { lines, truth, legs, phases: phaseSpans(truth, hz), epochs: truth.length, startTimeMs, hz };
}

function phaseSpans(truth: readonly TruthSample[], hz: number): PhaseSpan[] {
  const spans: PhaseSpan[] = [];
  for (const s of truth) {
    const last = spans[spans.length - 1];
    if (last && last.phase === s.phase) last.to = s.t + 1 / hz;
    else spans.push({ phase: s.phase, from: s.t, to: s.t + 1 / hz });
  }
  return spans;
}

/** The drive as file content (CRLF line ends, as receivers send). */
export function driveText(drive: SyntheticDrive): string {
  return `${drive.lines.join('\r\n')}\r\n`;
}
