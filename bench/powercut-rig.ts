/**
 * The parts of a power-cut run that bench:powercut and test/e2e/power-cut.test.ts share: a drive
 * with its physical truth (the product's synthetic receiver, src/sim/receiver, driving given legs
 * at 10 Hz), NMEA written into a pty at a pace with the daemon SIGKILLed and restarted at given
 * GNSS times, what survived each cut (the motion state in agent.db), and the judgement of the
 * events the platform received against the truth. Starting and killing the daemon is the caller's.
 *
 * Why SIGKILL stands for a power cut: SQLite runs WAL with synchronous=FULL
 * (src/store/database.ts), so every commit is fsynced before it returns. What a power cut can lose
 * beyond what SIGKILL loses is what the kernel held in its page cache and had not written, and with
 * every commit fsynced that is nothing of the database: a power cut loses what came after the last
 * commit, as SIGKILL does. (A disk that acknowledges a flush it has not done would lose more; no
 * test in software can stand in for that.)
 */
import { closeSync, constants, existsSync, openSync, readSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { generateDrive, type Leg } from '../src/sim/receiver/index.js';

/** GNSS time of the first epoch: fixed, so nothing depends on today's date. */
export const T0 = Date.UTC(2026, 10, 23, 7, 30, 0);
export const HZ = 10;
/** A made event matches an expected one of its type within this of the true time (then judged to DATING_S). */
export const MATCH_S = 30;
export const DATING_S = 5;
export const ODOMETER_PCT = 1;

export interface Epoch {
  /** GNSS ms. */
  time: number;
  /** The epoch's sentences, CRLF-terminated. */
  text: string;
}

/** A standing spell of the truth (speed 0) of at least stopAfterS: a stop the agent must make. */
export interface Stand {
  /** GNSS ms of the first epoch standing still. */
  from: number;
  /** GNSS ms of the first epoch moving again; undefined: still standing at the end of the drive. */
  to: number | undefined;
  lat: number;
  lon: number;
  /** True distance driven before it, metres. */
  distanceM: number;
}

export interface PowerCutDrive {
  epochs: Epoch[];
  stands: Stand[];
  /** True distance driven, metres. */
  distanceM: number;
  /** True distance driven up to this GNSS time. */
  distanceAt(time: number): number;
  /** Standing spells shorter than stopAfterS (red lights): no event. */
  lights: number;
}

/**
 * The legs driven by the synthetic receiver at 10 Hz (RMC with the Doppler speed, VTG, GGA, GSA,
 * GSV, ZDA: what a u-blox M9 sends), grouped by epoch, with the truth: the stands of at least
 * stopAfterS and the distance driven. A standing spell shorter than stopAfterS - 10 s is a red
 * light; one between that and stopAfterS + 10 s is refused (the truth would be ambiguous).
 */
export function buildPowerCutDrive(legs: Leg[], o: { seed: number; stopAfterS: number }): PowerCutDrive {
  const drive = generateDrive({ legs, hz: HZ, seed: o.seed, startTimeMs: T0 });
  const epochs: Epoch[] = [];
  let open: string[] = [];
  let afterZda = false;
  for (const line of drive.lines) {
    const kind = line.slice(3, 6);
    if ((kind === 'ZDA' || (kind === 'RMC' && !afterZda)) && open.length > 0) {
      epochs.push({ time: 0, text: `${open.join('\r\n')}\r\n` });
      open = [];
    }
    afterZda = kind === 'ZDA';
    open.push(line);
  }
  if (open.length > 0) epochs.push({ time: 0, text: `${open.join('\r\n')}\r\n` });
  if (epochs.length !== drive.truth.length) throw new Error(`${epochs.length} epochs for ${drive.truth.length} truth samples`);
  const times = drive.truth.map((s) => T0 + Math.round(s.t * 1000));
  epochs.forEach((e, i) => (e.time = times[i]!));
  // The route moves speed * dt at each sample (src/sim/receiver/route.ts driveRoute).
  const cumulative: number[] = [];
  let d = 0;
  for (const s of drive.truth) cumulative.push((d += s.speedMps / HZ));
  const distanceAt = (time: number): number => {
    let lo = 0;
    let hi = times.length - 1;
    if (time < times[0]!) return 0;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (times[mid]! <= time) lo = mid;
      else hi = mid - 1;
    }
    return cumulative[lo]!;
  };
  const stands: Stand[] = [];
  let lights = 0;
  for (let i = 0; i < drive.truth.length; ) {
    if (drive.truth[i]!.speedMps !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < drive.truth.length && drive.truth[j]!.speedMps === 0) j++;
    const seconds = (j - i) / HZ;
    const atEnd = j === drive.truth.length;
    if (seconds >= o.stopAfterS + 10 || (atEnd && seconds >= o.stopAfterS + 5)) {
      const s = drive.truth[i]!;
      stands.push({
        from: times[i]!,
        to: atEnd ? undefined : times[j]!,
        lat: s.lat,
        lon: s.lon,
        distanceM: i > 0 ? cumulative[i - 1]! : 0,
      });
    } else if (seconds <= o.stopAfterS - 10) lights++;
    else throw new Error(`a standing spell of ${seconds} s is too close to stopAfterS ${o.stopAfterS} s to say whether it is a stop`);
    i = j;
  }
  return { epochs, stands, distanceM: d, distanceAt, lights };
}

/** A drive leg of the synthetic receiver's route. */
export function driveLeg(heading: number, distanceM: number, cruiseMps: number, endMps = 0): Leg {
  return { kind: 'drive', phase: 'city', heading, distanceM, cruiseMps, endMps };
}

export function park(seconds: number): Leg {
  return { kind: 'park', phase: 'city', seconds };
}

// --- the events the platform should receive ---

export type MovementEventType = 'stopMovingEvent' | 'startMovingEvent';

export interface ExpectedEvent {
  eventType: MovementEventType;
  /** True GNSS ms. */
  time: number;
  /** Which stand (index in drive.stands). */
  stand: number;
  /** True distance driven at its time. */
  distanceM: number;
}

/**
 * A stop for every stand the vehicle arrived at (not the one it stood at when the agent first
 * started: nobody saw it stop), a start for every stand it left.
 */
export function expectedEvents(drive: PowerCutDrive): ExpectedEvent[] {
  const out: ExpectedEvent[] = [];
  drive.stands.forEach((s, i) => {
    if (s.from > drive.epochs[0]!.time) out.push({ eventType: 'stopMovingEvent', time: s.from, stand: i, distanceM: s.distanceM });
    if (s.to !== undefined) out.push({ eventType: 'startMovingEvent', time: s.to, stand: i, distanceM: drive.distanceAt(s.to) });
  });
  return out;
}

/** What the simulator holds of an event (src/sim/planning.ts ReceivedEvent). */
export interface Received {
  id: string;
  event: Record<string, unknown>;
  deliveries: number;
}

export interface JudgedEvent extends ExpectedEvent {
  /** Ids of the received events matched to it: one is right, none missing, more a duplicate. */
  ids: string[];
  /** Seconds between the first matched event's creationDate and the truth (signed: + late). */
  datingS: number | undefined;
  /** The matched event's odometer, metres. */
  odometerM: number | undefined;
}

export interface Judgement {
  events: JudgedEvent[];
  /** Received movement events that match no expected one. */
  spurious: { eventType: string; time: number; id: string }[];
  missing: number;
  /** Ids beyond the first for one true stop or start (the same event sent as a different one). */
  duplicates: number;
  /** Deliveries beyond the first of the same id (a resend after a cut: the platform keeps one per id). */
  resent: number;
  /** Largest |dating| of the events found, seconds. */
  worstDatingS: number;
  /** The odometer of the last event received (by GNSS time) and the true distance at its time. */
  lastOdometer: { odometerM: number; trueM: number; errorPct: number } | undefined;
}

const odometerOf = (e: Record<string, unknown>): number | undefined =>
  (e.externalAttributes as { odometer?: { value?: number } } | undefined)?.odometer?.value;

/** The received movement events against the expected ones, each matched to the nearest expected of its type within MATCH_S. */
export function judgeEvents(drive: PowerCutDrive, received: Iterable<Received>): Judgement {
  const expected: JudgedEvent[] = expectedEvents(drive).map((e) => ({ ...e, ids: [], datingS: undefined, odometerM: undefined }));
  const spurious: Judgement['spurious'] = [];
  let resent = 0;
  const movement = [...received]
    .filter((r) => r.event.eventType === 'stopMovingEvent' || r.event.eventType === 'startMovingEvent')
    .map((r) => ({ ...r, time: Date.parse(String(r.event.creationDate)) }))
    // By GNSS time, not arrival: the order of concurrent requests is nothing the agent promises.
    .sort((a, b) => a.time - b.time);
  for (const r of movement) {
    resent += r.deliveries - 1;
    let best: JudgedEvent | undefined;
    for (const e of expected) {
      if (e.eventType !== r.event.eventType || Math.abs(r.time - e.time) > MATCH_S * 1000) continue;
      if (!best || Math.abs(r.time - e.time) < Math.abs(r.time - best.time)) best = e;
    }
    if (!best) {
      spurious.push({ eventType: String(r.event.eventType), time: r.time, id: r.id });
      continue;
    }
    best.ids.push(r.id);
    if (best.datingS === undefined) {
      best.datingS = (r.time - best.time) / 1000;
      best.odometerM = odometerOf(r.event);
    }
  }
  const found = expected.filter((e) => e.datingS !== undefined);
  const last = movement.at(-1);
  const lastOdometerM = last ? odometerOf(last.event) : undefined;
  const lastTrue = last ? drive.distanceAt(last.time) : 0;
  return {
    events: expected,
    spurious,
    missing: expected.filter((e) => e.ids.length === 0).length,
    duplicates: expected.reduce((n, e) => n + Math.max(0, e.ids.length - 1), 0),
    resent,
    worstDatingS: Math.max(0, ...found.map((e) => Math.abs(e.datingS!))),
    lastOdometer:
      lastOdometerM !== undefined && lastTrue > 0
        ? { odometerM: lastOdometerM, trueM: lastTrue, errorPct: (lastOdometerM / lastTrue - 1) * 100 }
        : undefined,
  };
}

// --- feeding the pty with cuts ---

export interface Cut {
  label: string;
  /** GNSS ms: the daemon is killed once the epochs up to here are written. */
  at: number;
  /** With an event type: killed once the daemon has logged one more of it (at `at` at the earliest, `at` + 10 s at the latest). */
  afterEvent?: MovementEventType;
  /** GNSS ms of the first epoch written after the restart: the epochs between are lost with the gateway (its off time). */
  resumeAt: number;
}

/** What the daemon stored of the vehicle's state (meta 'motion.state', src/motion/motion-record.ts). */
export interface StoredMotion {
  odometerM: number;
  state: string;
  candidateSince?: number;
  runSince?: number;
  lastTime?: number;
}

export interface CutRecord {
  cut: Cut;
  /** GNSS ms of the last epoch written before the kill. */
  killedAt: number;
  /** Whether the afterEvent was logged before the kill (undefined: no afterEvent). */
  eventSeen?: boolean;
  /** The motion state found in the database after the kill. */
  stored: StoredMotion | undefined;
  /** True distance at the last epoch written. */
  trueM: number;
  /** The daemon's odometer just before the kill (status), when the caller asked for it. */
  liveM?: number;
  /** The live odometer minus the stored one: what the cut lost of what the daemon had counted. */
  lostM: number | undefined;
  /** The true distance at the last epoch written minus the stored odometer (the lost, what the daemon had not read, and its error so far). */
  behindTruthM: number | undefined;
}

export interface FeedOptions {
  epochs: Epoch[];
  /** GNSS seconds per wall second. */
  pace: number;
  cuts: Cut[];
  /** Writes into the pty's input side. */
  write(text: string): void;
  /** How many of this event type the running daemon has logged ('vehicle event' lines). */
  logged(eventType: MovementEventType): number;
  /** Kills the daemon (SIGKILL), restarts it and resolves once it reads the receiver again. */
  cut(record: CutRecord): Promise<void>;
  /** The data directory, read after each kill. */
  dataDir: string;
  /** The device side of the pty: bytes written before the kill and not read are lost with the power. */
  device: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Writes the epochs at `pace` times their GNSS rate, and at each cut kills and restarts the daemon
 * through `o.cut`, skipping the epochs of the time it was down. The pace is kept against the wall
 * clock from each (re)start, so a slow machine writes the same epochs, only later.
 */
export async function feedWithCuts(o: FeedOptions): Promise<CutRecord[]> {
  const records: CutRecord[] = [];
  const epochs = o.epochs;
  let i = 0;
  const feedUntil = async (stop: (time: number) => boolean): Promise<void> => {
    const base = performance.now();
    const first = epochs[i]?.time ?? 0;
    while (i < epochs.length) {
      const due = first + (performance.now() - base) * o.pace;
      let text = '';
      let stopped = false;
      while (i < epochs.length && epochs[i]!.time <= due) {
        if (stop(epochs[i]!.time)) {
          stopped = true;
          break;
        }
        text += epochs[i]!.text;
        i++;
      }
      if (text !== '') o.write(text);
      if (stopped) return;
      await sleep(10);
    }
  };
  for (const cut of [...o.cuts].sort((a, b) => a.at - b.at)) {
    let eventSeen: boolean | undefined;
    if (cut.afterEvent === undefined) await feedUntil((t) => t > cut.at);
    else {
      const kind = cut.afterEvent;
      const before = o.logged(kind);
      let lookedAt = -Infinity;
      eventSeen = false;
      await feedUntil((t) => {
        if (t <= cut.at) return false;
        // The log is read at most every 10 ms, not at each epoch of a batch.
        if (!eventSeen && performance.now() - lookedAt >= 10) {
          lookedAt = performance.now();
          eventSeen = o.logged(kind) > before;
        }
        return eventSeen || t > cut.at + 10_000;
      });
    }
    const killedAt = epochs[i - 1]?.time ?? 0;
    const record: CutRecord = { cut, killedAt, stored: undefined, trueM: 0, lostM: undefined, behindTruthM: undefined };
    if (eventSeen !== undefined) record.eventSeen = eventSeen;
    await o.cut(record);
    while (i < epochs.length && epochs[i]!.time < cut.resumeAt) i++;
    records.push(record);
  }
  await feedUntil(() => false);
  return records;
}

/**
 * After the kill, before the restart: what reached the disk, and the bytes the dead daemon had not
 * read taken out of the pty (a receiver's bytes in flight at a power cut are gone with it).
 */
export function afterKill(record: CutRecord, o: Pick<FeedOptions, 'dataDir' | 'device'>, distanceAt: (t: number) => number): void {
  drainPty(o.device);
  record.stored = storedMotion(o.dataDir);
  record.trueM = distanceAt(record.killedAt);
  if (!record.stored) return;
  record.behindTruthM = record.trueM - record.stored.odometerM;
  if (record.liveM !== undefined) record.lostM = record.liveM - record.stored.odometerM;
}

/** The motion state in agent.db, read as another process would after a crash (a WAL database recovers on open). */
export function storedMotion(dataDir: string): StoredMotion | undefined {
  const file = path.join(dataDir, 'agent.db');
  if (!existsSync(file)) return undefined;
  const db = new BetterSqlite3(file);
  try {
    const row = db.prepare("SELECT value FROM meta WHERE key = 'motion.state'").get() as { value: string } | undefined;
    if (!row) return undefined;
    const r = JSON.parse(row.value) as {
      odometerM: number;
      movement: { state: string; candidate?: { since: number }; run?: { since: number }; last?: { time: number } };
    };
    const s: StoredMotion = { odometerM: r.odometerM, state: r.movement.state };
    if (r.movement.candidate) s.candidateSince = r.movement.candidate.since;
    if (r.movement.run) s.runSince = r.movement.run.since;
    if (r.movement.last) s.lastTime = r.movement.last.time;
    return s;
  } finally {
    db.close();
  }
}

/** Reads the pty's device side until it is empty. */
export function drainPty(device: string): void {
  const fd = openSync(device, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  const buf = Buffer.alloc(65536);
  try {
    for (;;) {
      try {
        if (readSync(fd, buf, 0, buf.length, null) <= 0) return;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EAGAIN') return;
        throw e;
      }
    }
  } finally {
    closeSync(fd);
  }
}

/** Counts 'vehicle event' log lines of this type in a daemon's log (pino JSON, one a line). */
export function countLogged(log: string, eventType: MovementEventType): number {
  let n = 0;
  for (const line of log.split('\n')) if (line.includes('"vehicle event"') && line.includes(`"${eventType}"`)) n++;
  return n;
}

export const fmt = (n: number, d = 1): string => n.toFixed(d);
export const iso = (t: number): string => new Date(t).toISOString().slice(11, 21);
