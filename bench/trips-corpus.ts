/**
 * The corpus of bench:trips: drives with their physical truth (where and when the vehicle truly
 * stood still for at least stopAfterS, how far it truly drove, when the engine truly changed), as
 * the NMEA a receiver would send for them, decoded and gated as the daemon does (gated-fixes.ts).
 *
 * Two sources:
 * - the urban delivery drives of bench:motion / bench:policy (src/sim/receiver: planUrbanDeliveryRoute
 *   + generateDrive, seeds 7-9), whose TruthSample list is the truth;
 * - the corpus's own drives (below): a plan of segments (stand, speed up or brake, cruise, turn,
 *   the agent off for hours, the fix lost, a wrong position) stepped at the drive's rate, then a
 *   receiver's errors on top. The receiver: a slowly wandering position error (Gauss-Markov, sigma
 *   1.5 m, 30 s correlation) plus a fast one (sigma 0.5 m parked, 0.3 m moving, 1 s correlation:
 *   about 0.2 m from one 10 Hz epoch to the next, 0.5 m at 1 Hz, the same process sampled at
 *   either rate); a parked Doppler
 *   speed of |N(0, 0.13)| m/s (a standing receiver reads up to ~1.4 km/h), a moving one the true
 *   speed +- 0.05 m/s; HDOP 0.9, 12 satellites. Sentences RMC + GGA (Doppler speed), or GGA only
 *   with a ZDA every 10 s for the date (no speed: the daemon derives it from positions).
 *
 * The truth is what happened, not what the detector can see: a stop that began inside a fix gap
 * began there; what the bench accepts as its dating (the gap's edge) is said beside it (`datable`).
 * Deterministic: every random draw is seeded.
 */
import type { Fix } from '../src/fix/fix.js';
import { distanceAndBearing } from '../src/gnss/geodesy.js';
import { gga, rmc, zda, type EpochFacts } from '../src/sim/receiver/nmea-format.js';
import { driveText, generateDrive, planUrbanDeliveryRoute, type SyntheticDrive } from '../src/sim/receiver/index.js';
import { seededRandom, type Random } from '../src/sim/random.js';
import { gatedFixes } from './gated-fixes.js';

export const STOP_AFTER_S = 60;

/** What the tracker is given, in order: an accepted epoch or an ignition change. */
export type Action = { kind: 'fix'; fix: Fix } | { kind: 'ignition'; on: boolean; time: number | undefined };

/** One run of the daemon: its actions, then how it ended (a clean SIGTERM detaches; a power cut does not). */
export interface Run {
  actions: Action[];
  end: 'detach' | 'power cut';
}

/** A true stop of at least STOP_AFTER_S. */
export interface TrueStop {
  /** GNSS ms of the first epoch standing still / of the first moving again (undefined: still there at the end). */
  from: number;
  to: number | undefined;
  place: { lat: number; lon: number; label: string };
  /** A stop event is expected (false for a vehicle already standing when the agent first started: nobody saw it stop). */
  expectStop: boolean;
  /** A start event is expected (it left while the agent ran). */
  expectStart: boolean;
}

/** An event the tracker should make, with the GNSS times its dating is right within (lo..hi, then the 5 s tolerance). */
export interface ExpectedEvent {
  eventType: 'startMovingEvent' | 'stopMovingEvent' | 'startEngineEvent' | 'stopEngineEvent';
  /** When it truly happened (GNSS ms). */
  time: number;
  /** The dating the signal allows: [time, time] where the fix was there; the gap's edge(s) where it was not. */
  datable: [number, number];
  label: string;
  /** The true distance driven up to `time`, metres (what the event's odometer should say, from 0 at the first epoch). */
  odometerM: number;
  /** The true distance at the ends of `datable`: an event dated at a gap's edge says the odometer of then. */
  datableOdometerM: [number, number];
}

export interface CorpusDrive {
  name: string;
  hz: number;
  /** Minutes of fixes the receiver covered (the hours the agent was off are not counted). */
  minutes: number;
  /** 'drive': odometer judged in % of the true distance; 'parked': in metres per parked hour. */
  kind: 'drive' | 'parked';
  runs: Run[];
  truth: {
    stops: TrueStop[];
    /** True distance driven, metres. */
    distanceM: number;
    expected: ExpectedEvent[];
  };
  note: string;
}

export interface CorpusEntry {
  name: string;
  build: () => CorpusDrive;
}

// --- geometry: a local plane at Utrecht, with the WGS 84 radii there (metres agree with Vincenty's) ---

const LAT0 = 52.09;
const LON0 = 5.12;
const WGS84_A = 6378137;
const WGS84_E2 = 0.00669437999014;
const SIN2 = Math.sin((LAT0 * Math.PI) / 180) ** 2;
const M_PER_DEG_LAT = ((WGS84_A * (1 - WGS84_E2)) / (1 - WGS84_E2 * SIN2) ** 1.5) * (Math.PI / 180);
const M_PER_DEG_LON = (WGS84_A / Math.sqrt(1 - WGS84_E2 * SIN2)) * Math.cos((LAT0 * Math.PI) / 180) * (Math.PI / 180);

function toLatLon(x: number, y: number): { lat: number; lon: number } {
  return { lat: LAT0 + y / M_PER_DEG_LAT, lon: LON0 + x / M_PER_DEG_LON };
}

export const T0 = Date.UTC(2026, 10, 23, 7, 30, 0);
const KMH = 1 / 3.6;
const ACCEL = 1.5;
const DECEL = 2.0;

// --- the plan of a drive ---

type Seg =
  /** Stand still for s seconds. */
  | { kind: 'stand'; s: number }
  /** The agent is off for s seconds (hours): the vehicle stands, no epoch, no run. */
  | { kind: 'off'; s: number }
  /** Speed up (ACCEL) or brake (DECEL) to mps. */
  | { kind: 'speed'; mps: number }
  /** Hold the speed for s seconds. */
  | { kind: 'cruise'; s: number }
  | { kind: 'heading'; deg: number }
  /** The receiver loses / regains the fix. */
  | { kind: 'fix'; on: boolean }
  /** The next `epochs` epochs report a position off by (dx, dy) metres, each its own when `each` is given. */
  | { kind: 'wrong'; epochs: number; dx: number; dy: number; each?: (i: number, random: Random) => { dx: number; dy: number } }
  /** An ignition change at this moment (dated: the input dates it with the GNSS time), or the boot reading (undated, before the run's first fix). */
  | { kind: 'ignition'; on: boolean; dated: boolean }
  /** The run ends here (SIGTERM: detach, or a power cut); the next segment starts a new run. */
  | { kind: 'end run'; how: 'detach' | 'power cut' };

interface Sample {
  t: number;
  x: number;
  y: number;
  speed: number;
  heading: number;
  run: number;
  emit: boolean;
  /** True distance driven up to this sample. */
  d: number;
  wrong?: { dx: number; dy: number };
}

interface Trajectory {
  samples: Sample[];
  ignitions: { run: number; on: boolean; time: number | undefined; at: number }[];
  runEnds: ('detach' | 'power cut')[];
  distanceM: number;
}

function step(plan: Seg[], hz: number, seed: number): Trajectory {
  const random = seededRandom(seed ^ 0x7a3d);
  const dt = 1 / hz;
  const samples: Sample[] = [];
  const ignitions: Trajectory['ignitions'] = [];
  const runEnds: Trajectory['runEnds'] = [];
  let t = T0;
  let x = 0;
  let y = 0;
  let speed = 0;
  let heading = 0;
  let run = 0;
  let emit = true;
  let distanceM = 0;
  let wrong: { left: number; n: number; seg: Extract<Seg, { kind: 'wrong' }> } | undefined;
  const push = (): void => {
    t += Math.round(dt * 1000);
    const s: Sample = { t, x, y, speed, heading, run, emit, d: distanceM };
    if (wrong && wrong.left > 0) {
      const i = wrong.n - wrong.left;
      s.wrong = wrong.seg.each ? wrong.seg.each(i, random) : { dx: wrong.seg.dx, dy: wrong.seg.dy };
      // A wrong position is an epoch the receiver sends: only while it has a fix.
      if (emit) wrong.left--;
    }
    samples.push(s);
  };
  const move = (v0: number, v1: number): void => {
    const d = ((v0 + v1) / 2) * dt;
    distanceM += d;
    x += d * Math.sin((heading * Math.PI) / 180);
    y += d * Math.cos((heading * Math.PI) / 180);
  };
  for (const seg of plan) {
    switch (seg.kind) {
      case 'stand':
        speed = 0;
        for (let i = 0; i < Math.round(seg.s * hz); i++) push();
        break;
      case 'off':
        if (speed !== 0) throw new Error('the agent is off while the vehicle stands');
        t += seg.s * 1000;
        break;
      case 'speed':
        while (speed !== seg.mps) {
          const v0 = speed;
          speed = speed < seg.mps ? Math.min(seg.mps, speed + ACCEL * dt) : Math.max(seg.mps, speed - DECEL * dt);
          move(v0, speed);
          push();
        }
        break;
      case 'cruise':
        for (let i = 0; i < Math.round(seg.s * hz); i++) {
          move(speed, speed);
          push();
        }
        break;
      case 'heading':
        heading = seg.deg;
        break;
      case 'fix':
        emit = seg.on;
        break;
      case 'wrong':
        wrong = { left: seg.epochs, n: seg.epochs, seg };
        break;
      case 'ignition':
        ignitions.push({ run, on: seg.on, time: seg.dated ? t : undefined, at: t });
        break;
      case 'end run':
        runEnds.push(seg.how);
        run++;
        break;
    }
  }
  runEnds.push('detach');
  return { samples, ignitions, runEnds, distanceM };
}

// --- the receiver ---

interface ReceiverOptions {
  hz: number;
  seed: number;
  /** false: GGA only (no Doppler speed), with a ZDA every 10 s for the date. */
  doppler: boolean;
  /** Share of epochs the receiver drops at random (0..1). */
  dropRate?: number;
}

/** The NMEA of each run, and the GNSS times of the epochs the receiver sent. */
function receive(trajectory: Trajectory, o: ReceiverOptions): { texts: string[]; sent: Set<number> } {
  const random = seededRandom(o.seed);
  const gauss = (): number => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const dt = 1 / o.hz;
  // Gauss-Markov: e' = a e + sqrt(1 - a^2) sigma N(0, 1), a = exp(-dt / tau): stationary at sigma.
  const slow = Math.exp(-dt / 30);
  const fast = Math.exp(-dt / 1);
  let ex = gauss() * 1.5;
  let ey = gauss() * 1.5;
  let fx = gauss() * 0.5;
  let fy = gauss() * 0.5;
  const lines: string[][] = trajectory.runEnds.map(() => []);
  const sent = new Set<number>();
  const runStarted = new Set<number>();
  for (const s of trajectory.samples) {
    const parked = s.speed === 0;
    const sigma = parked ? 0.5 : 0.3;
    ex = slow * ex + Math.sqrt(1 - slow * slow) * 1.5 * gauss();
    ey = slow * ey + Math.sqrt(1 - slow * slow) * 1.5 * gauss();
    fx = fast * fx + Math.sqrt(1 - fast * fast) * sigma * gauss();
    fy = fast * fy + Math.sqrt(1 - fast * fast) * sigma * gauss();
    const doppler = parked ? Math.abs(gauss()) * 0.13 : Math.max(0, s.speed + 0.05 * gauss());
    const drop = o.dropRate !== undefined && random() < o.dropRate;
    if (!s.emit || drop) continue;
    const { lat, lon } = toLatLon(s.x + ex + fx + (s.wrong?.dx ?? 0), s.y + ey + fy + (s.wrong?.dy ?? 0));
    const facts: EpochFacts = {
      timeMs: s.t,
      lat,
      lon,
      altMSL: 4,
      speedMps: doppler,
      track: parked ? undefined : s.heading,
      hdop: 0.9,
      pdop: 1.5,
      vdop: 1.2,
      satellitesUsed: 12,
    };
    const out = lines[s.run]!;
    if (!o.doppler && (!runStarted.has(s.run) || s.t % 10_000 === 0)) out.push(zda(s.t));
    runStarted.add(s.run);
    if (o.doppler) out.push(rmc(facts));
    out.push(gga(facts));
    sent.add(s.t);
  }
  return { texts: lines.map((l) => (l.length ? `${l.join('\r\n')}\r\n` : '')), sent };
}

/** The run's gated fixes, with its ignition changes placed after the epochs up to their time. */
function actionsOf(text: string, ignitions: Trajectory['ignitions']): Action[] {
  const fixes = gatedFixes(Buffer.from(text, 'latin1'));
  const actions: Action[] = [];
  const pending = [...ignitions];
  // Undated readings (the boot reading) come before the first fix.
  for (const i of pending.filter((p) => p.time === undefined)) actions.push({ kind: 'ignition', on: i.on, time: undefined });
  const dated = pending.filter((p) => p.time !== undefined);
  for (const fix of fixes) {
    while (dated.length && dated[0]!.at < fix.time) {
      const i = dated.shift()!;
      actions.push({ kind: 'ignition', on: i.on, time: i.time });
    }
    actions.push({ kind: 'fix', fix });
  }
  for (const i of dated) actions.push({ kind: 'ignition', on: i.on, time: i.time });
  return actions;
}

// --- the truth ---

interface StillRun {
  first: number;
  /** Index of the first sample moving again (undefined: still at the end). */
  next: number | undefined;
}

/** Runs of samples standing still (speed 0), and how long each lasted. */
function stillRuns(speeds: readonly number[]): StillRun[] {
  const out: StillRun[] = [];
  let start: number | undefined;
  for (let i = 0; i < speeds.length; i++) {
    if (speeds[i] === 0) start ??= i;
    else if (start !== undefined) {
      out.push({ first: start, next: i });
      start = undefined;
    }
  }
  if (start !== undefined) out.push({ first: start, next: undefined });
  return out;
}

/** The latest sent epoch before `t` and the earliest at or after it. */
function edges(sent: readonly number[], t: number): { before: number | undefined; after: number | undefined } {
  let lo = 0;
  let hi = sent.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sent[mid]! < t) lo = mid + 1;
    else hi = mid;
  }
  return { before: sent[lo - 1], after: sent[lo] };
}

/** The true odometer at an event's time and at the ends of its datable span. */
function odometerOf(
  distanceAt: (t: number) => number,
  time: number,
  datable: [number, number],
): Pick<ExpectedEvent, 'odometerM' | 'datableOdometerM'> {
  return { odometerM: distanceAt(time), datableOdometerM: [distanceAt(datable[0]), distanceAt(datable[1])] };
}

/**
 * The expected movement events of the true stops. A stop is dated where it truly began when the
 * receiver sent that epoch, else at the gap's edge (the last epoch before it); a start where it
 * truly began, else anywhere across the gap it happened in.
 */
function expectedMovement(stops: readonly TrueStop[], sentTimes: readonly number[], distanceAt: (t: number) => number): ExpectedEvent[] {
  const sent = new Set(sentTimes);
  const out: ExpectedEvent[] = [];
  for (const s of stops) {
    if (s.expectStop) {
      const e = edges(sentTimes, s.from);
      const edge = e.before ?? s.from;
      const datable: [number, number] = sent.has(s.from) ? [s.from, s.from] : [edge, edge];
      out.push({
        eventType: 'stopMovingEvent',
        time: s.from,
        datable,
        label: `stop ${s.place.label}`,
        ...odometerOf(distanceAt, s.from, datable),
      });
    }
    if (s.expectStart && s.to !== undefined) {
      const e = edges(sentTimes, s.to);
      const datable: [number, number] = sent.has(s.to) ? [s.to, s.to] : [e.before ?? s.to, e.after ?? s.to];
      out.push({
        eventType: 'startMovingEvent',
        time: s.to,
        datable,
        label: `start ${s.place.label}`,
        ...odometerOf(distanceAt, s.to, datable),
      });
    }
  }
  return out;
}

// --- the corpus's own drives ---

interface OwnDrive {
  name: string;
  hz: number;
  plan: Seg[];
  seed: number;
  doppler?: boolean;
  dropRate?: number;
  kind?: 'drive' | 'parked';
  note: string;
  /** Names for the true stops, in order (default "stop N"). */
  places?: string[];
}

function own(d: OwnDrive): CorpusDrive {
  const tr = step(d.plan, d.hz, d.seed);
  const rx = receive(tr, {
    hz: d.hz,
    seed: d.seed,
    doppler: d.doppler ?? true,
    ...(d.dropRate !== undefined ? { dropRate: d.dropRate } : {}),
  });
  const runs: Run[] = rx.texts.map((text, i) => ({
    actions: actionsOf(
      text,
      tr.ignitions.filter((g) => g.run === i),
    ),
    end: tr.runEnds[i]!,
  }));
  const dt = 1000 / d.hz;
  const stops: TrueStop[] = [];
  for (const r of stillRuns(tr.samples.map((s) => s.speed))) {
    const first = tr.samples[r.first]!;
    const next = r.next === undefined ? undefined : tr.samples[r.next]!;
    const until = next ? next.t : tr.samples[tr.samples.length - 1]!.t + dt;
    if (until - first.t < STOP_AFTER_S * 1000) continue;
    stops.push({
      from: first.t,
      to: next?.t,
      place: { ...toLatLon(first.x, first.y), label: d.places?.[stops.length] ?? `stop ${stops.length + 1}` },
      // Standing at the agent's first epoch: nobody saw it stop.
      expectStop: r.first !== 0,
      expectStart: next !== undefined,
    });
  }
  const sentTimes = [...rx.sent].sort((a, b) => a - b);
  const distanceAt = (t: number): number => {
    let d = 0;
    for (const s of tr.samples) {
      if (s.t > t) break;
      d = s.d;
    }
    return d;
  };
  const expected = expectedMovement(stops, sentTimes, distanceAt);
  // Engine changes: each dated one at its time; the boot reading that differs from the stored state
  // (a change made while the agent was off) dated at the run's first fix.
  let stored: boolean | undefined;
  for (const g of tr.ignitions) {
    const known = stored;
    stored = g.on;
    const eventType = g.on ? 'startEngineEvent' : 'stopEngineEvent';
    if (g.time !== undefined) {
      if (known !== undefined && known !== g.on) out(eventType, g.time, [g.time, g.time], `engine ${g.on ? 'on' : 'off'}`);
      continue;
    }
    if (known === undefined || known === g.on) continue;
    const firstFix = runs[g.run]!.actions.find((a): a is Extract<Action, { kind: 'fix' }> => a.kind === 'fix')?.fix.time;
    if (firstFix !== undefined) out(eventType, g.at, [firstFix, firstFix], `engine ${g.on ? 'on' : 'off'} while the agent was off`);
  }
  function out(eventType: ExpectedEvent['eventType'], time: number, datable: [number, number], label: string): void {
    expected.push({ eventType, time, datable, label, ...odometerOf(distanceAt, time, datable) });
  }
  expected.sort((a, b) => a.time - b.time);
  const covered = runs.reduce((sum, r) => {
    const times = r.actions.flatMap((a) => (a.kind === 'fix' ? [a.fix.time] : []));
    return sum + (times.length ? times[times.length - 1]! - times[0]! + dt : 0);
  }, 0);
  return {
    name: d.name,
    hz: d.hz,
    minutes: covered / 60_000,
    kind: d.kind ?? 'drive',
    runs,
    truth: { stops, distanceM: tr.distanceM, expected },
    note: d.note,
  };
}

// --- the urban delivery drives (src/sim/receiver) ---

function urban(seed: number, hz: number): CorpusDrive {
  const legs = planUrbanDeliveryRoute({ random: seededRandom(seed) });
  const drive: SyntheticDrive = generateDrive({ legs, seed, hz });
  const runs: Run[] = [{ actions: actionsOf(driveText(drive), []), end: 'detach' }];
  const time = (i: number): number => drive.startTimeMs + Math.round(drive.truth[i]!.t * 1000);
  const stops: TrueStop[] = [];
  for (const r of stillRuns(drive.truth.map((s) => s.speedMps))) {
    const first = drive.truth[r.first]!;
    const until = r.next !== undefined ? time(r.next) : time(drive.truth.length - 1) + 1000 / hz;
    if (until - time(r.first) < STOP_AFTER_S * 1000) continue;
    stops.push({
      from: time(r.first),
      to: r.next !== undefined ? time(r.next) : undefined,
      place: {
        lat: first.lat,
        lon: first.lon,
        label:
          first.phase === 'depot'
            ? 'depot'
            : `red light of ${((until - time(r.first)) / 1000).toFixed(1)} s at ${Math.round(r.first / hz)} s`,
      },
      expectStop: r.first !== 0,
      expectStart: r.next !== undefined,
    });
  }
  // The true path: the noise-free positions, measured on WGS 84 as the odometer's chords are.
  let distanceM = 0;
  const cumulative = [0];
  for (let i = 1; i < drive.truth.length; i++) {
    const p = drive.truth[i - 1]!;
    const q = drive.truth[i]!;
    distanceM += distanceAndBearing(p.lat, p.lon, q.lat, q.lon).distance;
    cumulative.push(distanceM);
  }
  const sent = drive.truth.map((_, i) => time(i));
  const distanceAt = (t: number): number =>
    cumulative[Math.max(0, Math.min(cumulative.length - 1, Math.round(((t - drive.startTimeMs) * hz) / 1000)))]!;
  return {
    name: hz === 10 ? `urban-${seed}` : `urban-${seed}-${hz}hz`,
    hz,
    minutes: drive.epochs / hz / 60,
    kind: 'drive',
    runs,
    truth: { stops, distanceM, expected: expectedMovement(stops, sent, distanceAt) },
    note: `urban delivery (src/sim/receiver, seed ${seed}): red lights 15-60 s, a 10-minute depot stop, highway`,
  };
}

// --- the scenarios ---

const drive = (kmh: number, s: number, heading?: number): Seg[] => [
  ...(heading !== undefined ? [{ kind: 'heading', deg: heading } as Seg] : []),
  { kind: 'speed', mps: kmh * KMH },
  { kind: 'cruise', s },
];
const stop: Seg = { kind: 'speed', mps: 0 };

export const CORPUS: CorpusEntry[] = [
  { name: 'urban-7', build: () => urban(7, 10) },
  { name: 'urban-8', build: () => urban(8, 10) },
  { name: 'urban-9', build: () => urban(9, 10) },
  { name: 'urban-7-1hz', build: () => urban(7, 1) },
  {
    name: 'parked-2h-drops',
    build: () =>
      own({
        name: 'parked-2h-drops',
        hz: 1,
        seed: 21,
        dropRate: 0.2,
        kind: 'parked',
        plan: [{ kind: 'stand', s: 2 * 3600 }],
        places: ['parked'],
        note: 'parked 2 h from boot, 20 % of the epochs lost at random: no event, odometer < 5 m/h',
      }),
  },
  {
    name: 'parked-jump-60m',
    build: () =>
      own({
        name: 'parked-jump-60m',
        hz: 1,
        seed: 22,
        kind: 'parked',
        plan: [
          { kind: 'stand', s: 300 },
          { kind: 'wrong', epochs: 1, dx: 42, dy: 43 },
          { kind: 'stand', s: 300 },
        ],
        places: ['parked'],
        note: 'parked 10 min from boot, one epoch 60 m off at 5 min: no event',
      }),
  },
  {
    name: 'parked-multipath',
    build: () =>
      own({
        name: 'parked-multipath',
        hz: 10,
        seed: 23,
        kind: 'parked',
        plan: [
          { kind: 'stand', s: 150 },
          {
            kind: 'wrong',
            epochs: 10,
            dx: 0,
            dy: 0,
            // A reflection biases the solution one way (north-east, +- 20 degrees), 20-80 m.
            each: (_i, r) => {
              const m = 20 + 60 * r();
              const a = ((45 + (r() - 0.5) * 40) * Math.PI) / 180;
              return { dx: m * Math.sin(a), dy: m * Math.cos(a) };
            },
          },
          { kind: 'stand', s: 150 },
        ],
        places: ['parked'],
        note: 'parked 5 min from boot at 10 Hz, 1 s of multipath (10 epochs 20-80 m off, Doppler ~0): no event',
      }),
  },
  ...[10, 1].flatMap((hz) =>
    [true, false].map((doppler) => {
      const name = `jump-5km-${doppler ? 'rmc' : 'gga'}${hz === 1 ? '-1hz' : ''}`;
      return {
        name,
        build: () =>
          own({
            name,
            hz,
            seed: 24,
            doppler,
            plan: [
              { kind: 'stand', s: 10 },
              ...drive(50, 60, 90),
              { kind: 'fix', on: false },
              { kind: 'cruise', s: 3 },
              { kind: 'fix', on: true },
              { kind: 'wrong', epochs: 6, dx: 0, dy: 5000 },
              { kind: 'cruise', s: 60 },
              stop,
              { kind: 'stand', s: 90 },
            ],
            places: ['destination'],
            note: `driving at 50 km/h: 3 s without a fix, then 6 epochs 5 km off; ${doppler ? 'RMC+GGA' : 'GGA only'}; a 90 s stop at the end`,
          }),
      };
    }),
  ),
  {
    name: 'underground-park',
    build: () =>
      own({
        name: 'underground-park',
        hz: 10,
        seed: 25,
        plan: [
          { kind: 'stand', s: 10 },
          ...drive(50, 120, 0),
          ...drive(30, 30, 90),
          { kind: 'speed', mps: 5 * KMH },
          { kind: 'cruise', s: 8 },
          // Down the ramp: the fix goes, the van creeps 10 s more (14 m) and parks.
          { kind: 'fix', on: false },
          { kind: 'cruise', s: 10 },
          stop,
          { kind: 'stand', s: 600 - 10.5 },
          { kind: 'fix', on: true },
          { kind: 'stand', s: 30 },
          ...drive(30, 60, 180),
          stop,
          { kind: 'stand', s: 20 },
        ],
        places: ['underground car park'],
        note: 'slows to walking pace, the fix goes for 10 min, parks 14 m on, the fix comes back there, drives away 30 s later',
      }),
  },
  {
    name: 'left-park-in-gap',
    build: () =>
      own({
        name: 'left-park-in-gap',
        hz: 10,
        seed: 26,
        plan: [
          { kind: 'stand', s: 10 },
          ...drive(50, 120, 0),
          stop,
          { kind: 'stand', s: 4 },
          { kind: 'fix', on: false },
          { kind: 'stand', s: 446 },
          ...drive(50, 141, 90),
          { kind: 'fix', on: true },
          { kind: 'cruise', s: 60 },
          stop,
          { kind: 'stand', s: 90 },
        ],
        places: ['car park', 'destination'],
        note: 'parks, the fix goes 4 s later for 10 min; it left after 7.5 min and the fix returns 2 km away while driving',
      }),
  },
  {
    name: 'tunnel-80kmh',
    build: () =>
      own({
        name: 'tunnel-80kmh',
        hz: 10,
        seed: 27,
        plan: [
          { kind: 'stand', s: 10 },
          ...drive(80, 90, 45),
          { kind: 'fix', on: false },
          { kind: 'cruise', s: 60 },
          { kind: 'fix', on: true },
          { kind: 'cruise', s: 90 },
          stop,
          { kind: 'stand', s: 90 },
        ],
        places: ['destination'],
        note: 'a straight tunnel at 80 km/h, 60 s without a fix: no stop there, odometer within 1 %',
      }),
  },
  {
    name: 'boot-ignition-on',
    build: () =>
      own({
        name: 'boot-ignition-on',
        hz: 10,
        seed: 28,
        plan: [
          { kind: 'ignition', on: true, dated: false },
          { kind: 'stand', s: 20 },
          ...drive(50, 120, 90),
          stop,
          { kind: 'stand', s: 30 },
          { kind: 'ignition', on: false, dated: true },
          { kind: 'stand', s: 60 },
          { kind: 'end run', how: 'detach' },
          { kind: 'off', s: 3600 },
          // Someone turned the key while the agent was off: the input reads "on" at boot.
          { kind: 'ignition', on: true, dated: false },
          { kind: 'stand', s: 60 },
          ...drive(50, 60, 0),
        ],
        places: ['depot'],
        note: 'run 1 stores ignition off and detaches; run 2 (1 h later) boots with the ignition on, then drives away',
      }),
  },
  {
    name: 'sigterm-in-stop',
    build: () =>
      own({
        name: 'sigterm-in-stop',
        hz: 10,
        seed: 29,
        plan: [
          { kind: 'stand', s: 10 },
          ...drive(50, 120, 270),
          stop,
          { kind: 'stand', s: 30 },
          { kind: 'end run', how: 'detach' },
          { kind: 'off', s: 10 * 3600 },
          { kind: 'stand', s: 120 },
          ...drive(50, 60, 0),
        ],
        places: ['overnight'],
        note: 'SIGTERM 30 s into a stop, the agent back 10 h later at the same place, drives away 2 min later',
      }),
  },
  {
    name: 'engine-drive',
    build: () =>
      own({
        name: 'engine-drive',
        hz: 10,
        seed: 30,
        plan: [
          { kind: 'ignition', on: false, dated: false },
          { kind: 'stand', s: 60 },
          { kind: 'ignition', on: true, dated: true },
          { kind: 'stand', s: 30 },
          ...drive(50, 90, 0),
          stop,
          { kind: 'stand', s: 30 },
          ...drive(50, 120, 90),
          stop,
          { kind: 'stand', s: 60 },
          { kind: 'ignition', on: false, dated: true },
          { kind: 'stand', s: 60 },
        ],
        places: ['yard', 'customer'],
        note: 'boot reads the ignition off; on 30 s before leaving, a 30 s red light, off 60 s after the last stop',
      }),
  },
];
