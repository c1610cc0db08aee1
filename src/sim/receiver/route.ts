/**
 * The drive the synthetic receiver reports: a plan of legs (city streets with right-angle turns,
 * a parked stop at a depot, an on-ramp, a highway stretch with gentle bends, an exit back into
 * town) and a simple vehicle model that follows it at a fixed step. Deterministic from the seed.
 */
import type { Random } from '../random.js';

export type Phase = 'city' | 'depot' | 'highway';

/** Drive `distanceM` on `heading`, cruising at `cruiseMps`, slowing to `endMps` at its end. */
export interface DriveLeg {
  kind: 'drive';
  phase: Phase;
  heading: number;
  distanceM: number;
  cruiseMps: number;
  endMps: number;
}

export interface ParkLeg {
  kind: 'park';
  phase: Phase;
  seconds: number;
}

export type Leg = DriveLeg | ParkLeg;

export interface RoutePlanOptions {
  /** Target duration of the whole drive, minutes (the plan lands within a few percent). */
  minutes: number;
  random: Random;
  /** The depot park lasts at least this long, s (default: its share of the time alone). */
  depotMinS?: number;
}

const KMH = 1 / 3.6;
/** Average speed of city legs including turns and stops, for budgeting distance. */
const CITY_AVG_MPS = 24 * KMH;
const HIGHWAY_AVG_MPS = 92 * KMH;

/**
 * Time budget: 40 % city (half before the depot, half after the highway), 25 % parked at the
 * depot, 35 % highway. A 10-minute drive parks 2.5 minutes: "several minutes" in the issue.
 */
export function planRoute(options: RoutePlanOptions): Leg[] {
  const total = options.minutes * 60;
  const r = options.random;
  const legs: Leg[] = [];
  let heading = 90;
  const cityLegs = (seconds: number, endStopped: boolean): void => {
    let budget = seconds * CITY_AVG_MPS;
    while (budget > 60) {
      const distanceM = Math.min(budget, 150 + r() * 250);
      budget -= distanceM;
      const last = budget <= 60;
      legs.push({
        kind: 'drive',
        phase: 'city',
        heading,
        distanceM,
        cruiseMps: (30 + Math.round(r()) * 20) * KMH,
        endMps: last && endStopped ? 0 : 15 * KMH,
      });
      heading = (heading + (r() < 0.5 ? 90 : 270)) % 360;
    }
  };
  cityLegs(total * 0.2, true);
  legs.push({ kind: 'park', phase: 'depot', seconds: Math.max(Math.round(total * 0.25), options.depotMinS ?? 0) });
  // Out of the depot onto the ramp, then the highway in a few gently bending stretches.
  legs.push({ kind: 'drive', phase: 'city', heading, distanceM: 200, cruiseMps: 30 * KMH, endMps: 30 * KMH });
  heading = (heading + 45) % 360;
  legs.push({ kind: 'drive', phase: 'highway', heading, distanceM: 400, cruiseMps: 80 * KMH, endMps: 80 * KMH });
  let highway = total * 0.35 * HIGHWAY_AVG_MPS - 400;
  while (highway > 100) {
    const distanceM = Math.min(highway, 1500 + r() * 1500);
    highway -= distanceM;
    heading = (heading + (r() - 0.5) * 30 + 360) % 360;
    legs.push({
      kind: 'drive',
      phase: 'highway',
      heading,
      distanceM,
      cruiseMps: (98 + r() * 6) * KMH,
      endMps: highway > 100 ? 95 * KMH : 50 * KMH,
    });
  }
  heading = (heading + 90) % 360;
  cityLegs(total * 0.2, true);
  return legs;
}

/** The true state of the vehicle at one instant (the receiver adds its own noise on top). */
export interface TruthSample {
  /** Seconds since the start of the drive. */
  t: number;
  lat: number;
  lon: number;
  speedMps: number;
  /** Heading of the vehicle body, degrees true. */
  heading: number;
  phase: Phase;
}

const EARTH_RADIUS_M = 6_371_008.8;
const ACCEL = 1.5;
const DECEL = 2.0;
/** Degrees per second a vehicle turns at a street corner. */
const TURN_RATE = 30;

/**
 * Steps the vehicle through the legs at `hz` samples a second. Drive legs end when their distance is
 * covered; the speed target keeps a braking distance to the leg's end speed.
 */
export function driveRoute(legs: readonly Leg[], start: { lat: number; lon: number }, hz: number): TruthSample[] {
  const dt = 1 / hz;
  const out: TruthSample[] = [];
  let lat = start.lat;
  let lon = start.lon;
  let speed = 0;
  let heading = legs.find((l): l is DriveLeg => l.kind === 'drive')?.heading ?? 0;
  let step = 0;
  const push = (phase: Phase): void => {
    out.push({ t: step / hz, lat, lon, speedMps: speed, heading, phase });
    step++;
  };
  for (const leg of legs) {
    if (leg.kind === 'park') {
      speed = 0;
      for (let i = 0; i < leg.seconds * hz; i++) push(leg.phase);
      continue;
    }
    let covered = 0;
    // A guard against a leg that can never end (zero cruise speed): at most an hour per leg.
    for (let i = 0; covered < leg.distanceM && i < 3600 * hz; i++) {
      const remaining = leg.distanceM - covered;
      const brake = Math.sqrt(leg.endMps * leg.endMps + 2 * DECEL * remaining);
      // Never creep at zero before the end of a leg that ends stopped.
      const target = Math.max(Math.min(leg.cruiseMps, brake), 1.5);
      speed = speed < target ? Math.min(target, speed + ACCEL * dt) : Math.max(target, speed - DECEL * dt);
      const dh = ((leg.heading - heading + 540) % 360) - 180;
      heading = (heading + Math.sign(dh) * Math.min(Math.abs(dh), TURN_RATE * dt) + 360) % 360;
      const d = speed * dt;
      covered += d;
      const h = (heading * Math.PI) / 180;
      lat += ((d * Math.cos(h)) / EARTH_RADIUS_M) * (180 / Math.PI);
      lon += ((d * Math.sin(h)) / (EARTH_RADIUS_M * Math.cos((lat * Math.PI) / 180))) * (180 / Math.PI);
      push(leg.phase);
    }
    if (leg.endMps === 0) speed = 0;
  }
  return out;
}

/**
 * Fits a planned route to `seconds`: the planner budgets distance with average speeds, which
 * acceleration, corners and braking make optimistic (a 10-minute plan drove 8.8 minutes). The
 * drive legs' distances are scaled until driving them takes the time left beside the parks, and
 * the last few seconds become a stop at the destination, so the drive lasts `seconds` to one epoch.
 */
export function fitRoute(legs: readonly Leg[], seconds: number, start: { lat: number; lon: number }, hz: number): Leg[] {
  const parked = legs.reduce((s, l) => s + (l.kind === 'park' ? l.seconds : 0), 0);
  const took = (ls: readonly Leg[]): number => driveRoute(ls, start, hz).length / hz;
  let fitted: Leg[] = [...legs];
  // Aim a little short: the stop at the end takes up the rest, and a drive never runs over.
  const target = Math.max(seconds - 2, (seconds + parked) / 2);
  for (let i = 0; i < 8; i++) {
    const driving = took(fitted) - parked;
    const wanted = target - parked;
    if (driving <= seconds - parked && driving >= wanted - 3) break;
    const factor = wanted / Math.max(driving, 1 / hz);
    fitted = fitted.map((l) => (l.kind === 'drive' ? { ...l, distanceM: l.distanceM * factor } : l));
  }
  const rest = seconds - took(fitted);
  const last = fitted[fitted.length - 1];
  if (rest > 0) fitted.push({ kind: 'park', phase: last?.phase ?? 'city', seconds: rest });
  return fitted;
}
