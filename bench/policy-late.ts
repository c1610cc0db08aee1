/**
 * bench:policy's first table: today's path policy (deciding each position as it comes) beside the
 * one that decides late (`recording.maxDelayS`), on the urban delivery drives, a dense city grid,
 * a winding rural road and a highway (src/sim/receiver), at 1 Hz through the real decoder and gate.
 * Events per hour of drive (stops included), the path against every moving epoch (p95, max), stops
 * of 30 s or more with two positions, and the live position's largest age while moving. A last row
 * gives up the p95 goal (25 m everywhere) to show the floor the roads themselves set.
 */
import { gatedFixes } from './gated-fixes.js';
import type { Fix, RecordedFix } from '../src/fix/fix.js';
import { recordingDefaults, RecordingPolicy, type RecordingPolicyOptions } from '../src/gnss/recording-policy.js';
import { speedKmhOf } from '../src/gnss/speed-hysteresis.js';
import { trackFidelity } from '../src/gnss/track-fidelity.js';
import {
  driveText,
  generateDrive,
  planDenseGridRoute,
  planHighwayRoute,
  planUrbanDeliveryRoute,
  planWindingRuralRoute,
  type Leg,
} from '../src/sim/receiver/index.js';
import { seededRandom } from '../src/sim/random.js';

interface DriveSet {
  name: string;
  /** The goal in events per hour of drive, if the issue set one. */
  goal?: number;
  drives: Fix[][];
}

const fixesOf = (legs: Leg[], seed: number): Fix[] => gatedFixes(Buffer.from(driveText(generateDrive({ legs, seed })), 'latin1'));

export function driveSets(): DriveSet[] {
  const seeds = (list: number[], plan: (seed: number) => Leg[]): Fix[][] => list.map((s) => fixesOf(plan(s), s));
  return [
    { name: 'urban delivery, seeds 7-9', goal: 110, drives: seeds([7, 8, 9], (s) => planUrbanDeliveryRoute({ random: seededRandom(s) })) },
    {
      name: 'dense city grid, seeds 11-13, 60 min',
      goal: 150,
      drives: seeds([11, 12, 13], (s) => planDenseGridRoute({ random: seededRandom(s), minutes: 60 })),
    },
    {
      name: 'winding rural road, seeds 21-22, 40 min',
      drives: seeds([21, 22], (s) => planWindingRuralRoute({ random: seededRandom(s), minutes: 40 })),
    },
    { name: 'highway, seeds 31-32, 40 min', drives: seeds([31, 32], (s) => planHighwayRoute({ random: seededRandom(s), minutes: 40 })) },
  ];
}

export interface LateRow {
  eventsPerHour: number;
  p95M: number;
  maxM: number;
  stops: number;
  stopsKept: number;
  liveAgeS: number;
  /** Largest delay between a fix's GNSS time and the fix it was recorded at. */
  delayS: number;
}

/** Replays each drive through a fresh policy: the figures over the set (p95 and max: worst drive). */
export function measureSet(drives: readonly Fix[][], options: Partial<RecordingPolicyOptions>): LateRow {
  const movingKmh = { ...recordingDefaults(), ...options }.movingSpeedKmh;
  const row: LateRow = { eventsPerHour: 0, p95M: 0, maxM: 0, stops: 0, stopsKept: 0, liveAgeS: 0, delayS: 0 };
  let events = 0;
  let hours = 0;
  for (const fixes of drives) {
    const policy = new RecordingPolicy(options);
    const out: RecordedFix[] = [];
    let live: number | undefined;
    for (let i = 0; i < fixes.length; i++) {
      const f = fixes[i]!;
      for (const r of policy.offer(f)) {
        out.push(r);
        live = Math.max(live ?? r.time, r.time);
        row.delayS = Math.max(row.delayS, (f.time - r.time) / 1000);
      }
      // The platform's newest position, once the policy has answered this fix, while the vehicle moves.
      if (live !== undefined && (speedKmhOf(f, fixes[i - 1]) ?? 0) > movingKmh)
        row.liveAgeS = Math.max(row.liveAgeS, (f.time - live) / 1000);
    }
    out.push(...policy.flush());
    const fid = trackFidelity(fixes, out);
    events += out.length;
    hours += fid.durationS / 3600;
    row.p95M = Math.max(row.p95M, fid.p95M);
    row.maxM = Math.max(row.maxM, fid.maxM);
    row.stops += fid.stops;
    row.stopsKept += fid.stopsRepresented;
  }
  row.eventsPerHour = events / hours;
  return row;
}

export const LATE_CANDIDATES: { name: string; options: Partial<RecordingPolicyOptions> }[] = [
  { name: 'today: path 10 m, decides at once', options: { mode: 'path', maxDelayS: 0 } },
  { name: 'late: path 10 m (max 20), maxDelayS 10', options: { mode: 'path', maxDelayS: 10 } },
  { name: 'late: path 10 m (max 20), maxDelayS 20', options: { mode: 'path', maxDelayS: 20 } },
  { name: 'late: path 10 m (max 20), maxDelayS 30', options: { mode: 'path', maxDelayS: 30 } },
  { name: 'floor: 25 m everywhere (p95 given up)', options: { mode: 'path', maxDelayS: 20, pathToleranceM: 25, pathMaxDeviationM: 25 } },
];

/** Prints the side-by-side table; returns events per hour by set and candidate, for the month below it. */
export function printLateTable(sets: readonly DriveSet[]): Map<string, Map<string, LateRow>> {
  const all = new Map<string, Map<string, LateRow>>();
  console.log('\ntoday and the late-deciding path policy side by side (1 Hz; p95 and max: worst drive of the set)');
  console.log(
    `  ${'policy'.padEnd(42)} ${'events/h'.padStart(9)} ${'p95 m'.padStart(6)} ${'max m'.padStart(6)} ${'stops'.padStart(7)} ${'live s'.padStart(7)} ${'delay s'.padStart(8)} ${'vs today'.padStart(9)}  path goal`,
  );
  for (const set of sets) {
    console.log(`  ${set.name}${set.goal !== undefined ? ` (goal <= ${set.goal} events/h)` : ''}`);
    const rows = new Map<string, LateRow>();
    all.set(set.name, rows);
    for (const c of LATE_CANDIDATES) {
      const r = measureSet(set.drives, c.options);
      rows.set(c.name, r);
      const today = rows.values().next().value!;
      const met = r.p95M <= 10 && r.maxM <= 25 && r.stopsKept === r.stops && r.liveAgeS <= 60;
      console.log(
        `  ${('  ' + c.name).padEnd(42)} ${r.eventsPerHour.toFixed(0).padStart(9)} ${r.p95M.toFixed(1).padStart(6)} ${r.maxM.toFixed(1).padStart(6)} ${`${r.stopsKept}/${r.stops}`.padStart(7)} ${r.liveAgeS.toFixed(0).padStart(7)} ${r.delayS.toFixed(0).padStart(8)} ${(r.eventsPerHour / today.eventsPerHour).toFixed(2).padStart(9)}  ${met ? 'met' : 'missed'}`,
      );
    }
  }
  console.log(
    '  (path goal: p95 <= 10 m and max <= 25 m at every moving epoch, every stop of 30 s or more with two positions, live position <= 60 s old while moving above movingSpeedKmh; delay: how long after its GNSS time a position was recorded)',
  );
  return all;
}

/** bench:wire's figures the month is built from, each overridable where another run measured otherwise. */
const EVENT_B = Number(process.env.POLICY_EVENT_BYTES_ALL_IN ?? 995);
const MOTION_EVENTS_PER_MONTH = 637 + 440;

/**
 * The month: 10 h of driving on 22 days of each set, 510 parked hours, the movement and engine
 * events of the full-rate detector (bench:motion) at the same bytes per event.
 */
export function printMonth(all: Map<string, Map<string, LateRow>>, parked: { name: string; kb: number }[]): void {
  console.log(
    `\nthe month: 220 driving hours at ${EVENT_B} B an event all in (bench:wire over the urban drive: connections and refreshes included), ${MOTION_EVENTS_PER_MONTH} movement and engine events (bench:motion), 510 parked hours`,
  );
  console.log(
    `  ${'drives / policy'.padEnd(58)} ${'events/month'.padStart(13)} ${parked.map((p) => `MB, parked ${p.name}`.padStart(28)).join('')}`,
  );
  for (const [set, rows] of all) {
    if (!/urban|grid/.test(set)) continue;
    for (const [name, r] of rows) {
      if (name.startsWith('floor')) continue;
      const events = r.eventsPerHour * 220 + MOTION_EVENTS_PER_MONTH;
      const mb = parked.map((p) => ((events * EVENT_B + 510 * p.kb * 1024) / 1e6).toFixed(1).padStart(28)).join('');
      console.log(`  ${`${set.split(',')[0]}: ${name}`.padEnd(58)} ${events.toFixed(0).padStart(13)} ${mb}`);
    }
  }
}
