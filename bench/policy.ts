/**
 * `npm run bench:policy`: which recording policy, at which threshold, keeps the path for the fewest
 * events (goal "the path is kept" against "<= 50 MB per vehicle-month").
 *
 * Drives: the project's synthetic drives (src/sim/receiver: city streets with right-angle turns, a
 * depot stop, a highway with bends) for several seeds, one of them at 10 Hz, and the logs of the
 * shared NMEA corpus that move (skipped with a notice where the shared test data is absent). Each goes through
 * the real decoder and quality gate once; the fixes that pass are the full-rate track, offered to
 * each policy as the agent would. For every policy it prints events per hour of drive (stops
 * included, as a vehicle's day is), the path figures (track-fidelity.ts: the delivered positions
 * linearly interpolated in time against every moving epoch: max, 95th percentile, share within
 * 10 m; stops of 30 s or more with >= 2 positions), then the event body, field by field, and the
 * month (10 h x 22 days) those events cost.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gatedFixes } from './gated-fixes.js';
import { driveSets, printLateTable, printMonth } from './policy-late.js';
import type { Fix, RecordedFix } from '../src/fix/fix.js';
import { recordingDefaults, RecordingPolicy, type RecordingPolicyOptions } from '../src/gnss/recording-policy.js';
import { trackFidelity, type Fidelity } from '../src/gnss/track-fidelity.js';
import { speedKmhOf } from '../src/gnss/speed-hysteresis.js';
import { toLocationUpdateEvent, type EventDetail } from '../src/platform/otm5/event.js';
import { describeUrbanRoute, driveText, generateDrive, planUrbanDeliveryRoute, type Leg } from '../src/sim/receiver/index.js';
import { seededRandom } from '../src/sim/random.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, here.includes(`${path.sep}dist${path.sep}`) ? '../../..' : '..');
const corpusDir = path.resolve(repoRoot, '../shared/nmea-corpus');

interface Drive {
  name: string;
  fixes: Fix[];
}

/**
 * The urban delivery drive the month is projected from (bench:wire replays seed 7): red
 * lights about every minute and a half of city driving, corners every 100-400 m, a depot stop, a
 * highway stretch. Three seeds.
 */
const urban: (Drive & { what: string; hours: number })[] = [7, 8, 9].map((seed) => {
  const legs = planUrbanDeliveryRoute({ random: seededRandom(seed) });
  const drive = generateDrive({ legs, seed });
  return {
    name: `urban delivery seed ${seed}`,
    what: describeUrbanRoute(legs),
    hours: drive.epochs / drive.hz / 3600,
    fixes: gatedFixes(Buffer.from(driveText(drive), 'latin1')),
  };
});

const synthetic: Drive[] = [];
for (const seed of [1, 2, 3, 4, 5]) {
  const drive = generateDrive({ minutes: 60, seed });
  synthetic.push({ name: `synthetic seed ${seed}, 60 min, 1 Hz`, fixes: gatedFixes(Buffer.from(driveText(drive), 'latin1')) });
}
synthetic.push({
  name: 'synthetic delivery round: 40 stops of 8 s to 5 min, 1 Hz',
  fixes: gatedFixes(Buffer.from(driveText(deliveryRound(7)), 'latin1')),
});
synthetic.push({
  name: 'synthetic seed 6, 20 min, 10 Hz',
  fixes: gatedFixes(Buffer.from(driveText(generateDrive({ minutes: 20, seed: 6, hz: 10 })), 'latin1')),
});

/** City legs with right-angle turns, each ending at a stop: traffic lights, short drops, deliveries. */
function deliveryRound(seed: number): ReturnType<typeof generateDrive> {
  const r = seededRandom(seed);
  const stops = [8, 15, 25, 30, 35, 45, 60, 120, 300];
  const legs: Leg[] = [];
  let heading = 0;
  for (let i = 0; i < 40; i++) {
    legs.push({
      kind: 'drive',
      phase: 'city',
      heading,
      distanceM: 150 + r() * 450,
      cruiseMps: (30 + Math.round(r()) * 20) / 3.6,
      endMps: 0,
    });
    legs.push({ kind: 'park', phase: 'city', seconds: stops[i % stops.length]! });
    heading = (heading + (r() < 0.5 ? 90 : 270)) % 360;
  }
  return generateDrive({ seed, legs });
}

const corpus: Drive[] = [];
if (!existsSync(corpusDir)) process.stdout.write(`corpus: ${corpusDir} is absent; only the synthetic drives are measured\n`);
else {
  for (const f of readdirSync(corpusDir)
    .filter((x) => x.endsWith('.log'))
    .sort()) {
    const fixes = gatedFixes(readFileSync(path.join(corpusDir, f)));
    let moving = 0;
    for (let i = 0; i < fixes.length; i++) if ((speedKmhOf(fixes[i]!, fixes[i - 1]) ?? 0) >= 3) moving++;
    if (moving >= 30) corpus.push({ name: `corpus ${f}`, fixes });
  }
}

interface Candidate {
  name: string;
  options: Partial<RecordingPolicyOptions>;
}

/** The old default: adaptive with the thresholds it shipped with. */
const OLD: Candidate = {
  name: 'old: adaptive 30 s / 100 m / 10 deg / 10 km/h',
  options: { mode: 'adaptive', maxIntervalS: 30, minDistanceM: 100, minHeadingChangeDeg: 10, minSpeedChangeKmh: 10 },
};
const candidates: Candidate[] = [
  { name: 'all fixes', options: { mode: 'all' } },
  OLD,
  {
    name: 'fixed: every 10 s (+ stop transitions)',
    options: { mode: 'adaptive', maxIntervalS: 10, minDistanceM: 1e9, minHeadingChangeDeg: 180, minSpeedChangeKmh: 1e9 },
  },
  ...[3, 5, 8, 10, 12, 15, 20].map((t) => ({ name: `path ${t} m, heartbeat 60 s`, options: { mode: 'path' as const, pathToleranceM: t } })),
  { name: 'path 10 m, heartbeat 30 s', options: { mode: 'path', pathToleranceM: 10, maxIntervalS: 30 } },
  { name: 'path 10 m, heartbeat 120 s', options: { mode: 'path', pathToleranceM: 10, maxIntervalS: 120 } },
  { name: 'path 15 m, heartbeat 120 s', options: { mode: 'path', pathToleranceM: 15, maxIntervalS: 120 } },
];
const DEFAULT_NAME = `path ${recordingDefaults().pathToleranceM} m, heartbeat ${recordingDefaults().maxIntervalS} s`;

function replay(fixes: readonly Fix[], options: Partial<RecordingPolicyOptions>): RecordedFix[] {
  const policy = new RecordingPolicy(options);
  const out: RecordedFix[] = [];
  for (const f of fixes) out.push(...policy.offer(f));
  out.push(...policy.flush());
  return out;
}

interface Row {
  events: number;
  hours: number;
  movingHours: number;
  worst: Fidelity;
  p95Worst: number;
  within10Worst: number;
  stops: number;
  stopsRepresented: number;
}

function measure(drives: readonly Drive[], options: Partial<RecordingPolicyOptions>): Row {
  const row: Row = { events: 0, hours: 0, movingHours: 0, worst: undefined!, p95Worst: 0, within10Worst: 1, stops: 0, stopsRepresented: 0 };
  for (const d of drives) {
    const delivered = replay(d.fixes, options);
    const f = trackFidelity(d.fixes, delivered);
    row.events += delivered.length;
    row.hours += f.durationS / 3600;
    row.movingHours += f.movingS / 3600;
    if (!row.worst || f.maxM > row.worst.maxM) row.worst = f;
    row.p95Worst = Math.max(row.p95Worst, f.p95M);
    row.within10Worst = Math.min(row.within10Worst, f.within10m);
    row.stops += f.stops;
    row.stopsRepresented += f.stopsRepresented;
  }
  return row;
}

const pad = (s: string, n: number): string => s.padEnd(n);

/** Where the events of the default policy go, per hour of drive, against the earlier stop repeat at 20 s. */
function reasons(drives: readonly Drive[]): void {
  const hours = drives.reduce((s, d) => s + trackFidelity(d.fixes, []).durationS / 3600, 0);
  const rows: [string, Partial<RecordingPolicyOptions>][] = [
    ['former stop repeat (stopRepeatS 20)', { stopRepeatS: 20 }],
    [`default (stopRepeatS ${recordingDefaults().stopRepeatS})`, {}],
  ];
  const labels: Record<string, string> = {
    path: 'corners and speed changes (path)',
    stopped: 'arrival at a stop',
    stop: 'repeat at a stop',
    departure: 'departure',
    interval: 'heartbeats while moving',
    heartbeat: 'heartbeats while stopped',
    first: 'first',
    last: 'last (shutdown)',
    creep: 'creep while stopped',
    gap: 'gap in the fixes',
  };
  const counts = rows.map(([, o]) => {
    const c = new Map<string, number>();
    for (const d of drives) for (const r of replay(d.fixes, o)) c.set(r.reason ?? '?', (c.get(r.reason ?? '?') ?? 0) + 1);
    return c;
  });
  console.log(`\n  where the events go, per hour of drive (${drives.length} drives, ${num(hours, 2)} h):`);
  console.log(`  ${pad('cause', 36)} ${rows.map(([n]) => n.padStart(40)).join('')}`);
  for (const k of Object.keys(labels)) {
    if (counts.every((c) => !c.has(k))) continue;
    console.log(`  ${pad(labels[k]!, 36)} ${counts.map((c) => num((c.get(k) ?? 0) / hours, 1).padStart(40)).join('')}`);
  }
  console.log(
    `  ${pad('total', 36)} ${counts.map((c) => num([...c.values()].reduce((a, b) => a + b, 0) / hours, 1).padStart(40)).join('')}`,
  );
}
const num = (x: number, d = 0): string => x.toFixed(d);

function table(title: string, drives: readonly Drive[]): Map<string, Row> {
  const rows = new Map<string, Row>();
  const hours = drives.reduce((s, d) => s + trackFidelity(d.fixes, []).durationS / 3600, 0);
  console.log(`\n${title}: ${drives.length} drives, ${num(hours, 2)} h, ${drives.reduce((s, d) => s + d.fixes.length, 0)} fixes`);
  for (const d of drives) console.log(`  ${d.name}`);
  console.log(
    `  ${pad('policy', 44)} ${'events/h'.padStart(9)} ${'per mov.h'.padStart(9)} ${'max m'.padStart(7)} ${'p95 m'.padStart(6)} ${'<=10m'.padStart(6)} ${'stops>=2'.padStart(9)}  goal`,
  );
  for (const c of candidates) {
    const r = measure(drives, c.options);
    rows.set(c.name, r);
    const meets = r.worst.maxM <= 25 && r.p95Worst <= 10 && r.stopsRepresented === r.stops;
    console.log(
      `  ${pad(c.name + (c.name === DEFAULT_NAME ? ' (default)' : ''), 44)} ${num(r.events / r.hours).padStart(9)} ${num(r.events / Math.max(r.movingHours, 1e-9)).padStart(9)} ${num(r.worst.maxM, 1).padStart(7)} ${num(r.p95Worst, 1).padStart(6)} ${`${num(r.within10Worst * 100, 1)}%`.padStart(6)} ${`${r.stopsRepresented}/${r.stops}`.padStart(9)}  ${meets ? 'met' : 'missed'}`,
    );
  }
  console.log('  (max: worst drive; p95 and <=10m: worst drive; events/h per hour of drive, stops included; per mov.h: per hour moving)');
  return rows;
}

const lateRows = printLateTable(driveSets());
printMonth(lateRows, [
  { name: '8.4 KB', kb: 8.4 },
  { name: '18.4 KB', kb: 18.4 },
]);
const urbanRows = table('urban delivery drives (src/sim/receiver/urban-route.ts)', urban);
for (const d of urban) console.log(`  ${d.name}: ${(d.hours * 60).toFixed(0)} min, ${d.what}`);
reasons(urban);
const syntheticRows = table('synthetic drives (src/sim/receiver)', synthetic);
if (corpus.length > 0) table('corpus logs that move (../shared/nmea-corpus)', corpus);
else if (existsSync(corpusDir)) console.log('\ncorpus: no log moves for 30 epochs or more');

// The body: field by field, for the delivered fixes of the default policy on the synthetic drives.
const device = {
  externalSystemId: 'acme-fleet',
  externalDeviceId: '10000000a1b2c3d4',
  source: 'cpu-serial',
  deviceUUID: '3f1c2b9e-8a7d-4c1e-9b2a-5d6e7f801234',
};
const sample = replay(synthetic[0]!.fixes, recordingDefaults()).map((f, i) => ({
  ...f,
  lat: f.lat!,
  lon: f.lon!,
  eventId: `2ed6657d-e927-568b-95e1-${String(i).padStart(12, '0')}`,
}));

/** Bytes of each member as it appears in the JSON (`"key":value` plus its comma), nested one level. */
function fieldBytes(event: Record<string, unknown>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [k, v] of Object.entries(event)) {
    if (v && typeof v === 'object' && !Array.isArray(v) && (k === 'geoReference' || k === 'externalAttributes')) {
      out.set(`${k}{}`, Buffer.byteLength(`"${k}":{},`));
      for (const [k2, v2] of Object.entries(v)) out.set(`${k}.${k2}`, Buffer.byteLength(`"${k2}":${JSON.stringify(v2)},`));
    } else out.set(k, Buffer.byteLength(`"${k}":${JSON.stringify(v)},`));
  }
  return out;
}

function bodyBytes(detail: EventDetail, plate: string | undefined): { mean: number; fields: Map<string, number> } {
  const fields = new Map<string, number>();
  let total = 0;
  for (const f of sample) {
    const e = toLocationUpdateEvent(f, device, { detail, ...(plate !== undefined ? { licensePlate: plate } : {}) });
    total += Buffer.byteLength(JSON.stringify(e));
    for (const [k, b] of fieldBytes(e as unknown as Record<string, unknown>)) fields.set(k, (fields.get(k) ?? 0) + b);
  }
  for (const [k, b] of fields) fields.set(k, b / sample.length);
  return { mean: total / sample.length, fields };
}

/** The earlier body: the full detail, speed and heading to 2 decimals, always both identities. */
function oldBodyBytes(plate: string): number {
  let total = 0;
  for (const f of sample) {
    const e = toLocationUpdateEvent(f, device, { detail: 'full', licensePlate: plate }) as unknown as {
      geoReference: { speed?: { value: number }; heading?: { value: number } };
    };
    if (f.speed !== undefined && e.geoReference.speed) e.geoReference.speed.value = Math.round(f.speed * 3.6 * 100) / 100;
    if (f.track !== undefined && e.geoReference.heading) e.geoReference.heading.value = Math.round(f.track * 100) / 100;
    total += Buffer.byteLength(JSON.stringify(e));
  }
  return total / sample.length;
}

const PLATE = 'AB-123-C';
const variants = [
  { name: 'position, licence plate', b: bodyBytes('position', PLATE) },
  { name: 'position, no plate (device ids)', b: bodyBytes('position', undefined) },
  { name: 'full, licence plate', b: bodyBytes('full', PLATE) },
];
console.log(`\nevent body (request JSON), mean over the ${sample.length} events of synthetic seed 1 under the default policy`);
const keys = [...new Set(variants.flatMap((v) => [...v.b.fields.keys()]))];
console.log(`  ${pad('field', 34)} ${variants.map((v) => v.name.padStart(32)).join(' ')}`);
for (const k of keys) console.log(`  ${pad(k, 34)} ${variants.map((v) => num(v.b.fields.get(k) ?? 0, 1).padStart(32)).join(' ')}`);
console.log(`  ${pad('body total (with braces)', 34)} ${variants.map((v) => num(v.b.mean, 1).padStart(32)).join(' ')}`);
const oldBody = oldBodyBytes(PLATE);
console.log(`  before the shorter body: ${num(oldBody, 1)} B up, and the platform echoed it: ${num(2 * oldBody, 1)} B of body per event`);
console.log('  the platform echoes the request body in its 200 (Prefer: return=minimal is asked for; a 204 would save it)');

// The month: 10 h of driving a day on 22 days, body bytes only (heads and TLS: bench:wire).
const HOURS_PER_MONTH = 10 * 22;
/** bench:wire's warm bytes per event at the socket (h2, bearer indexed, echoed answer), both ways. */
const PER_EVENT_B = Number(process.env.POLICY_EVENT_BYTES ?? 800);
const position = variants[0]!.b.mean;
console.log(
  `\nprojected month, ${HOURS_PER_MONTH} h of drive (urban delivery drives), event bodies up and echoed down; all in at bench:wire's warm ${PER_EVENT_B} B per event (h2, bearer indexed, echo included; token refreshes and handshakes not included: bench:wire)`,
);
console.log(
  `  ${pad('policy', 44)} ${'events/h'.padStart(9)} ${'events/month'.padStart(13)} ${'bodies MB'.padStart(10)} ${`at ${PER_EVENT_B} B/event MB`.padStart(18)}`,
);
for (const [name, body] of [
  [OLD.name, 2 * oldBody],
  [DEFAULT_NAME, 2 * position],
] as const) {
  const r = urbanRows.get(name)!;
  const perHour = r.events / r.hours;
  const month = perHour * HOURS_PER_MONTH;
  console.log(
    `  ${pad(name, 44)} ${num(perHour).padStart(9)} ${num(month).padStart(13)} ${num((month * body) / 1e6, 2).padStart(10)} ${num((month * PER_EVENT_B) / 1e6, 2).padStart(18)}`,
  );
}
console.log(
  `  (old: old body up + echo down, ${num(2 * oldBody)} B; default: eventDetail "position" with a plate, up and echoed, ${num(2 * position)} B)`,
);
