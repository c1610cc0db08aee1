/**
 * bench:trips: a corpus of drives with their truth (bench/trips-corpus.ts), each run through the
 * daemon's trip detector, MotionTracker (src/motion/motion-tracker.ts), as the daemon runs it: every
 * accepted epoch of the NMEA, decoded and gated (gated-fixes.ts), the ignition changes at their
 * GNSS times, a sink that commits each event's state at once, and the state in a meta store that
 * survives a restart (a run that ends with SIGTERM detaches; a power cut just drops the tracker).
 *
 * Per drive one row: stops and starts expected / found / spurious, engine changes expected /
 * found, the worst dating error of the events found (seconds outside what the signal allows: the
 * true time where the fix was there, the gap's edge where it was not), the odometer's error (%
 * of the true distance on drives, metres per parked hour on parked drives), and PASS or FAIL
 * against the goals:
 *   - no spurious stop or start;
 *   - every stop of >= stopAfterS found, and every start after one that the agent saw;
 *   - dating within 5 s;
 *   - odometer within 1 % on drives, under 5 m per parked hour parked;
 *   - every engine change, once, dated within 5 s.
 * A made event matches an expected one of its type within 30 s of the true time, or within 5 s of
 * its datable time (the gap's edge); made events left unmatched are spurious.
 * It prints FAIL rows, it does not throw: exit code 0. `--only NAME` runs one drive; `--verbose` lists each drive's
 * true stops, expected events and made events.
 */
import { silentLogger } from '../src/log.js';
import { MotionTracker } from '../src/motion/motion-tracker.js';
import type { VehicleEvent } from '../src/fix/fix.js';
import { CORPUS, STOP_AFTER_S, type CorpusDrive, type ExpectedEvent } from './trips-corpus.js';

const MATCH_S = 30;
const DATING_S = 5;
const ODOMETER_PCT = 1;
const PARKED_M_PER_H = 5;

const only = (() => {
  const i = process.argv.indexOf('--only');
  return i >= 0 ? process.argv[i + 1] : undefined;
})();
const verbose = process.argv.includes('--verbose');
const entries = only === undefined ? CORPUS : CORPUS.filter((e) => e.name === only);
if (entries.length === 0) {
  console.error(`no drive named ${only ?? '(missing)'}; the drives: ${CORPUS.map((e) => e.name).join(', ')}`);
  process.exit(2);
}

/** A state write as the outbox commits it (the tracker's StateWrite: a meta key and its JSON value). */
interface StateWrite {
  key: string;
  value: unknown;
}

/** The state that changes between events (the tracker's StateSource), written with the outbox's commits. */
interface StateSource {
  due(): StateWrite | undefined;
  committed(write: StateWrite): void;
}

/** The outbox's commit interval (storage.commitIntervalMs), here in GNSS time. */
const COMMIT_INTERVAL_MS = 1000;

/**
 * Runs the drive's runs through fresh trackers over one meta store (JSON copies: a restart finds
 * only what was stored); the events they made and the final odometer. The sink stands for the
 * outbox: an event's state is committed with it at once, the tracker's state source once a second
 * of GNSS time and at the final commit of a clean stop (after detach, as the daemon stops the
 * tracker before the store). A power cut drops the tracker with no final commit.
 */
function runDrive(d: CorpusDrive): { events: VehicleEvent[]; odometerM: number } {
  const stored = new Map<string, string>();
  const meta = {
    getJson<T>(key: string): T | undefined {
      const v = stored.get(key);
      return v === undefined ? undefined : (JSON.parse(v) as T);
    },
    setJson(key: string, value: unknown): void {
      stored.set(key, JSON.stringify(value));
    },
  };
  const events: VehicleEvent[] = [];
  let source: StateSource | undefined;
  const commit = (): void => {
    const write = source?.due();
    if (!write) return;
    meta.setJson(write.key, write.value);
    source?.committed(write);
  };
  const sink = {
    // The state beside the event: a write to commit with it (or, from an older tracker, a closure that writes it).
    recordEvent(event: VehicleEvent, state?: unknown): void {
      events.push(JSON.parse(JSON.stringify(event)) as VehicleEvent);
      if (typeof state === 'function') (state as () => void)();
      else if (state !== undefined) {
        const w = state as StateWrite;
        meta.setJson(w.key, w.value);
      }
    },
    setStateSource(s: StateSource | undefined): void {
      source = s;
    },
  };
  let odometerM = 0;
  for (const run of d.runs) {
    source = undefined;
    const tracker = new MotionTracker({
      movement: { stopAfterS: STOP_AFTER_S, departRadiusM: 50, stillSpeedKmh: 3 },
      logger: silentLogger(),
      ignitionWired: run.actions.some((a) => a.kind === 'ignition'),
    });
    tracker.attach(sink, meta);
    let lastCommit: number | undefined;
    for (const a of run.actions) {
      if (a.kind === 'ignition') {
        tracker.ignition(a.on, a.time);
        continue;
      }
      tracker.offer(a.fix);
      lastCommit ??= a.fix.time;
      if (a.fix.time - lastCommit >= COMMIT_INTERVAL_MS) {
        commit();
        lastCommit = a.fix.time;
      }
    }
    odometerM = tracker.status().odometerM;
    if (run.end === 'detach') {
      tracker.detach();
      commit();
    }
    // A power cut: the tracker is dropped; what was committed last is all the next run has.
  }
  return { events, odometerM };
}

/** Seconds outside the datable span (0 inside it). */
const datingErrorS = (made: number, e: ExpectedEvent): number => Math.max(0, e.datable[0] - made, made - e.datable[1]) / 1000;

interface Matched {
  expected: ExpectedEvent;
  made: VehicleEvent | undefined;
  errorS: number | undefined;
}

/** Each expected event, in time order, takes the nearest made one of its type that is close enough. */
function match(
  expected: readonly ExpectedEvent[],
  made: readonly VehicleEvent[],
  types: readonly string[],
): { matched: Matched[]; spurious: VehicleEvent[] } {
  const free = made.filter((m) => types.includes(m.eventType));
  const matched: Matched[] = [];
  for (const e of expected.filter((x) => types.includes(x.eventType))) {
    let best: { i: number; err: number } | undefined;
    free.forEach((m, i) => {
      if (m.eventType !== e.eventType) return;
      const err = datingErrorS(m.time, e);
      if (Math.abs(m.time - e.time) / 1000 > MATCH_S && err > DATING_S) return;
      if (!best || err < best.err) best = { i, err };
    });
    if (best) {
      const [m] = free.splice(best.i, 1);
      matched.push({ expected: e, made: m, errorS: best.err });
    } else matched.push({ expected: e, made: undefined, errorS: undefined });
  }
  return { matched, spurious: free };
}

interface Row {
  name: string;
  hz: number;
  minutes: number;
  stops: [number, number, number];
  starts: [number, number, number];
  engine: [number, number];
  datingS: number | undefined;
  odometer: string;
  pass: boolean;
  why: string[];
}

const t0 = Date.now();
const rows: Row[] = [];
const hhmmss = (t: number): string => new Date(t).toISOString().slice(11, 19);

for (const entry of entries) {
  const d = entry.build();
  const { events, odometerM } = runDrive(d);
  const movement = match(d.truth.expected, events, ['stopMovingEvent', 'startMovingEvent']);
  const engine = match(d.truth.expected, events, ['startEngineEvent', 'stopEngineEvent']);
  const count = (ms: Matched[], type: string): Matched[] => ms.filter((m) => m.expected.eventType === type);
  const stopsE = count(movement.matched, 'stopMovingEvent');
  const startsE = count(movement.matched, 'startMovingEvent');
  const found = (ms: Matched[]): number => ms.filter((m) => m.made).length;
  const spuriousStops = movement.spurious.filter((e) => e.eventType === 'stopMovingEvent');
  const spuriousStarts = movement.spurious.filter((e) => e.eventType === 'startMovingEvent');
  const errors = movement.matched.flatMap((m) => (m.errorS !== undefined ? [m.errorS] : []));
  const datingS = errors.length ? Math.max(...errors) : undefined;
  const why: string[] = [];
  for (const m of movement.matched) {
    if (!m.made) why.push(`${m.expected.label} (${hhmmss(m.expected.time)}) missed`);
    else if (m.errorS! > DATING_S) why.push(`${m.expected.label} dated ${m.errorS!.toFixed(1)} s off`);
  }
  for (const s of movement.spurious) why.push(`spurious ${s.eventType === 'stopMovingEvent' ? 'stop' : 'start'} ${hhmmss(s.time)}`);
  for (const m of engine.matched) {
    if (!m.made) why.push(`${m.expected.label} missed`);
    else if (m.errorS! > DATING_S) why.push(`${m.expected.label} dated ${m.errorS!.toFixed(1)} s off`);
  }
  for (const s of engine.spurious) why.push(`spurious ${s.eventType} ${hhmmss(s.time)}`);
  let odometer: string;
  if (d.kind === 'parked') {
    const perH = odometerM / (d.minutes / 60);
    odometer = `${perH.toFixed(1)} m/h parked`;
    if (!(perH < PARKED_M_PER_H)) why.push(`odometer ${odometerM} m in ${(d.minutes / 60).toFixed(2)} h parked`);
  } else {
    const pct = (odometerM / d.truth.distanceM - 1) * 100;
    odometer = `${pct >= 0 ? '+' : ''}${pct.toFixed(2)} %`;
    if (!(Math.abs(pct) <= ODOMETER_PCT)) why.push(`odometer ${odometerM} m for ${Math.round(d.truth.distanceM)} m`);
  }
  if (verbose) {
    console.log(`${d.name}: ${d.note}; true distance ${Math.round(d.truth.distanceM)} m, odometer ${odometerM} m`);
    for (const st of d.truth.stops)
      console.log(
        `  true stop ${st.place.label}: ${hhmmss(st.from)}-${st.to === undefined ? 'end' : hhmmss(st.to)} (${st.expectStop ? 'stop' : 'no stop'}, ${st.expectStart ? 'start' : 'no start'} expected)`,
      );
    for (const e of d.truth.expected)
      console.log(
        `  expected ${e.eventType} ${hhmmss(e.time)} datable ${hhmmss(e.datable[0])}-${hhmmss(e.datable[1])} true odometer ${Math.round(e.odometerM)} m (${e.label})`,
      );
    for (const e of events) console.log(`  made     ${e.eventType} ${hhmmss(e.time)} odometer ${e.odometerM} m`);
  }
  rows.push({
    name: d.name,
    hz: d.hz,
    minutes: d.minutes,
    stops: [stopsE.length, found(stopsE), spuriousStops.length],
    starts: [startsE.length, found(startsE), spuriousStarts.length],
    engine: [engine.matched.length, found(engine.matched)],
    datingS,
    odometer,
    pass: why.length === 0,
    why,
  });
}

console.log(
  `bench:trips: ${rows.length} drive${rows.length === 1 ? '' : 's'} through MotionTracker (stopAfterS ${STOP_AFTER_S}, departRadiusM 50, stillSpeedKmh 3), NMEA decoded and gated as the daemon does`,
);
console.log(
  `goals: 0 spurious stops/starts; every stop >= ${STOP_AFTER_S} s found; dating within ${DATING_S} s (the gap's edge where the fix was lost); odometer within ${ODOMETER_PCT} % (< ${PARKED_M_PER_H} m per parked hour); every engine change\n`,
);
const header = ['drive', 'Hz', 'min', 'stops e/f/s', 'starts e/f/s', 'engine e/f', 'dating s', 'odometer', 'result'];
const table = rows.map((r) => [
  r.name,
  String(r.hz),
  r.minutes.toFixed(1),
  r.stops.join('/'),
  r.starts.join('/'),
  r.engine.join('/'),
  r.datingS === undefined ? '-' : r.datingS.toFixed(1),
  r.odometer,
  r.pass ? 'PASS' : `FAIL: ${r.why.join('; ')}`,
]);
const widths = header.map((h, i) =>
  Math.max(h.length, i === 0 ? 'power-cut-disk-full'.length : 0, ...table.map((t) => (i === header.length - 1 ? 0 : t[i]!.length))),
);
const line = (cells: string[]): string =>
  cells.map((c, i) => (i === 0 || i === cells.length - 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
console.log(line(header).trimEnd());
for (const t of table) console.log(line(t).trimEnd());
if (only === undefined) console.log(`${'power-cut-disk-full'.padEnd(widths[0]!)}  see test/store (not in this bench)`);

const sum = (f: (r: Row) => number): number => rows.reduce((s, r) => s + f(r), 0);
const passed = rows.filter((r) => r.pass).length;
console.log(
  `\n${passed}/${rows.length} PASS; spurious stops ${sum((r) => r.stops[2])}, starts ${sum((r) => r.starts[2])}; stops found ${sum((r) => r.stops[1])}/${sum((r) => r.stops[0])}, starts ${sum((r) => r.starts[1])}/${sum((r) => r.starts[0])}; engine changes ${sum((r) => r.engine[1])}/${sum((r) => r.engine[0])} (${((Date.now() - t0) / 1000).toFixed(1)} s)`,
);
process.exitCode = 0;
