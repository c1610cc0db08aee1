/**
 * How bench:trips judges a drive of the corpus (trips-corpus.ts): run through MotionTracker as the
 * daemon runs it, its events matched against the truth, one row with PASS or FAIL and the reasons.
 * The bench prints the rows; test/motion/trips-corpus.test.ts expects every one to pass.
 */
import type { StateSource, StateWrite, VehicleEvent } from '../src/fix/fix.js';
import { silentLogger } from '../src/log.js';
import { MotionTracker } from '../src/motion/motion-tracker.js';
import { STOP_AFTER_S, type CorpusDrive, type ExpectedEvent } from './trips-corpus.js';

export const MATCH_S = 30;
export const DATING_S = 5;
export const ODOMETER_PCT = 1;
export const PARKED_M_PER_H = 5;
/** An event's odometer against the true distance at its time: within 1 % of it or this many metres. */
export const EVENT_ODOMETER_M = 25;

/** The outbox's commit interval (storage.commitIntervalMs), here in GNSS time. */
const COMMIT_INTERVAL_MS = 1000;

/**
 * Runs the drive's runs through fresh trackers over one meta store (JSON copies: a restart finds
 * only what was stored); the events they made and the final odometer. The sink stands for the
 * outbox: an event's state is committed with it at once, the tracker's state source once a second
 * of GNSS time and at the final commit of a clean stop (after detach, as the daemon stops the
 * tracker before the store). A power cut drops the tracker with no final commit.
 */
export function runDrive(d: CorpusDrive): { events: VehicleEvent[]; odometerM: number } {
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
    // The state beside the event, committed with it.
    recordEvent(event: VehicleEvent, state?: StateWrite): void {
      events.push(JSON.parse(JSON.stringify(event)) as VehicleEvent);
      if (state !== undefined) meta.setJson(state.key, state.value);
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

export interface Row {
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

const hhmmss = (t: number): string => new Date(t).toISOString().slice(11, 19);

/** Runs one drive and judges it against the goals. */
export function evaluateDrive(d: CorpusDrive, verbose = false): Row {
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
  // The reading an event carries: what was driven up to its time (not a gap's distance after it, nor a lost run's).
  for (const m of [...movement.matched, ...engine.matched]) {
    if (!m.made) continue;
    // Dated inside its datable span (a gap), it says the odometer of its dating: anything between the span's ends.
    const [lo, hi] = [
      Math.min(m.expected.odometerM, ...m.expected.datableOdometerM),
      Math.max(m.expected.odometerM, ...m.expected.datableOdometerM),
    ];
    const allowed = Math.max(EVENT_ODOMETER_M, (hi * ODOMETER_PCT) / 100);
    if (m.made.odometerM < lo - allowed || m.made.odometerM > hi + allowed)
      why.push(`${m.expected.label} odometer ${m.made.odometerM} m for ${Math.round(m.expected.odometerM)} m`);
  }
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
  return {
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
  };
}
