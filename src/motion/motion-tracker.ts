import type { Fix, StateSource, StateWrite, VehicleEvent, VehicleEventKind } from '../fix/fix.js';
import type { Logger } from '../log.js';
import {
  MOVEMENT_DEFAULTS,
  MovementDetector,
  type MovementChange,
  type MovementOptions,
  type MovementSnapshot,
  type MovementState,
  type Place,
} from './movement.js';
import { CountsHistory, type Counts } from './counts-history.js';
import { Odometer } from './odometer.js';
import { PositionJumps } from './position-jumps.js';
import { applyEngineHoursSetting, applyOdometerSetting, MOTION_META_KEY, type MotionMeta, type MotionRecord } from './motion-record.js';

/**
 * Where the events go (the store handle's queue): the event with the state to commit beside it,
 * and the state that changes between events (the odometer), written with the outbox's commits.
 */
export interface VehicleEventSink {
  recordEvent(event: VehicleEvent, state?: StateWrite): void;
  setStateSource?(source: StateSource | undefined): void;
}

/** 'unknown': an input is configured but cannot be read now (ignitionFault says why). */
export type IgnitionState = 'on' | 'off' | 'not wired' | 'unknown';

export interface MotionStatus {
  state: MovementState;
  /** ISO time (GNSS) of the last change; absent while unknown. */
  since?: string;
  odometerM: number;
  ignition: IgnitionState;
  /** Why the configured input cannot be read now (a missing tool, chip or file, no permission). */
  ignitionFault?: string;
  /** Why engine events are held or edges missed now: the input flaps, or gpiomon keeps ending. */
  ignitionUnstable?: string;
  /** Ignition-on time, hours (one decimal); absent without an ignition input. */
  engineHours?: number;
  /** Impossible position steps left out of the odometer and the trips since start. */
  positionJumps: number;
}

export interface MotionTrackerOptions {
  movement: Partial<MovementOptions> & { stillSpeedKmh: number };
  logger: Logger;
  /** Whether an ignition input is configured (else status says "not wired"). */
  ignitionWired: boolean;
  /** The ignition input (file-ignition.ts or gpio-ignition.ts), started and stopped with the tracker. */
  ignitionInput?: { start(): Promise<void>; stop(): void; fault(): string | undefined; unstable?(): string | undefined };
}

/** The counts are worth a write again once the odometer moved this far or the engine ran this long. */
const STATE_ODOMETER_STEP_M = 5;
const STATE_ENGINE_STEP_S = 60;
/** Counts alone commit at most this often (GNSS ms): a commit of its own costs a page and a WAL frame, about 4 KB. */
const STATE_COUNTS_ALONE_MS = 15_000;

/**
 * The vehicle's day (movement, engine, odometer, engine hours) from every accepted epoch and the
 * ignition input, as vehicle events into the outbox. Attached once to the store handle's queue and
 * records (a swap of the database underneath holds an event until the next outbox takes it, with its
 * state), and the first attach restores what the last run stored. Each event is committed with the
 * state that made it, in one transaction; between events the outbox commits the state when it
 * changed (StateSource), so a power cut loses about a second of distance, never a trip, and a stop
 * or start in progress at the cut is made at the next start with its true time. No stop or start
 * is made twice (the same GNSS time also gives the same event id).
 */
export class MotionTracker implements StateSource {
  readonly #options: MotionTrackerOptions;
  readonly #movement: MovementDetector;
  readonly #odometer: Odometer;
  readonly #jumps: PositionJumps;
  readonly #history: CountsHistory;
  #ignition: 'on' | 'off' | undefined;
  /** A change read before this run's first fix: made at that fix, with its time and place. */
  #pendingIgnition: 'on' | 'off' | undefined;
  #engineOffSince: number | undefined;
  #engineS = 0;
  /** GNSS ms up to which the ignition-on time is counted, while it is on. */
  #engineMark: number | undefined;
  /** GNSS ms of the last engine change made by this run. */
  #engineChangedAt: number | undefined;
  #sink: VehicleEventSink | undefined;
  #restored = false;
  /** The last accepted epoch: where the vehicle is when the ignition changes. */
  #last: { time: number; at: Place } | undefined;
  #appliedSetting: number | undefined;
  #appliedEngineSetting: number | undefined;
  /** What the last committed state said, to tell whether it is due again. */
  #committedPrint: Fingerprint | undefined;
  /** GNSS ms of the last epoch when the state was last committed. */
  #committedAt: number | undefined;
  #forceWrite = false;

  constructor(options: MotionTrackerOptions) {
    this.#options = options;
    this.#movement = new MovementDetector(options.movement);
    this.#odometer = new Odometer({ stillSpeedKmh: options.movement.stillSpeedKmh });
    // As far back as a change is dated: a stop at its candidate, a start at its first moving epoch.
    const m = { ...MOVEMENT_DEFAULTS, ...options.movement };
    this.#history = new CountsHistory((Math.max(m.stopAfterS, m.departAfterS) + 10) * 1000);
    this.#jumps = new PositionJumps({
      onJump: (r) =>
        options.logger.warn(
          { ...r, time: new Date(r.time).toISOString() },
          'position jumped farther than the vehicle can move: left out of the odometer and the trips',
        ),
    });
  }

  /** Starts the ignition input, if there is one (once: it outlives a restart of the store, like the tracker). */
  async start(): Promise<void> {
    await this.#options.ignitionInput?.start();
  }

  stop(): void {
    this.#options.ignitionInput?.stop();
  }

  attach(sink: VehicleEventSink, meta: MotionMeta): void {
    this.#sink = sink;
    if (!this.#restored) {
      this.#restored = true;
      this.#restore(meta);
    }
    sink.setStateSource?.(this);
  }

  /** The store is about to close: its final commit writes the state, then the tracker lets go. */
  detach(): void {
    this.#forceWrite = true;
    this.#sink = undefined;
  }

  /** One accepted epoch. */
  offer(fix: Fix): void {
    if (fix.lat === undefined || fix.lon === undefined) return;
    const verdict = this.#jumps.check(fix);
    if (verdict === 'jump') return;
    if (this.#last && fix.time <= this.#last.time) return;
    this.#last = { time: fix.time, at: { lat: fix.lat, lon: fix.lon } };
    this.#countEngine(fix.time);
    if (verdict === 'moved') this.#odometer.restartAt(fix);
    else this.#odometer.offer(fix);
    const pending = this.#pendingIgnition;
    if (pending !== undefined) {
      this.#pendingIgnition = undefined;
      this.#engineChange(pending, fix.time);
    }
    const hints = this.#ignition === 'off' && this.#engineOffSince !== undefined ? { engineOffSince: this.#engineOffSince } : {};
    this.#history.push({ time: fix.time, odometerM: this.#odometer.metres, engineS: this.#engineS });
    // A change dated back (a start confirmed after it began, a stop at a gap's edge) carries the counts of its time.
    for (const change of this.#movement.offer(fix, hints)) this.#movementChange(change, this.#history.at(change.time));
  }

  /**
   * The debounced ignition changed, at this GNSS time (the input dates it). The first reading
   * with no stored state says how it is, not that it changed. One that differs from the stored
   * state is a change made while the agent was off or starting: dated at the first fix of this run
   * (nobody saw it earlier), as is any change read before that fix.
   */
  ignition(on: boolean, time: number | undefined): void {
    const next = on ? 'on' : 'off';
    if (this.#ignition === undefined) {
      this.#ignition = next;
      if (next === 'on') this.#engineMark = time !== undefined ? Math.round(time) : undefined;
      return;
    }
    if (next === this.#ignition) {
      this.#pendingIgnition = undefined; // back before the first fix: nothing changed
      return;
    }
    if (!this.#last || time === undefined) {
      this.#pendingIgnition = next;
      return;
    }
    this.#pendingIgnition = undefined;
    // Dated when first read, which is before the fixes that came in during the debounce; never
    // before the engine change it follows.
    this.#engineChange(next, Math.max(Math.round(time), this.#engineChangedAt ?? -Infinity));
  }

  status(): MotionStatus {
    const since = this.#movement.since;
    return {
      state: this.#movement.state,
      ...(since !== undefined ? { since: new Date(since).toISOString() } : {}),
      odometerM: Math.round(this.#odometer.metres),
      ...this.#ignitionStatus(),
      ...(this.#options.ignitionWired ? { engineHours: Math.round(this.#engineS / 360) / 10 } : {}),
      positionJumps: this.#jumps.count,
    };
  }

  /**
   * StateSource: the state, when it changed enough since the last commit to be worth a write. A
   * change of the movement's facts or the ignition goes with the next commit; counts alone (the
   * odometer and engine time growing while driving) make a commit of their own only every
   * STATE_COUNTS_ALONE_MS of GNSS time, and ride along with any commit the outbox makes anyway: a
   * cut between loses no distance, which the restart bridges from the stored edge.
   */
  due(alone = false): StateWrite | undefined {
    const record = this.#record();
    const print = fingerprint(record);
    if (!this.#forceWrite) {
      if (print.facts === this.#committedPrint?.facts && print.counts === this.#committedPrint.counts) return undefined;
      const now = this.#last?.time;
      const recent = now !== undefined && this.#committedAt !== undefined && now - this.#committedAt < STATE_COUNTS_ALONE_MS;
      if (alone && print.facts === this.#committedPrint?.facts && recent) return undefined;
    }
    return { key: MOTION_META_KEY, value: record };
  }

  committed(write: StateWrite): void {
    if (write.key !== MOTION_META_KEY) return;
    this.#committedPrint = fingerprint(write.value as MotionRecord);
    this.#committedAt = this.#last?.time;
    this.#forceWrite = false;
  }

  /** A failing input is said as such: the state kept from before is not a reading. A flapping one is read, its events held. */
  #ignitionStatus(): Pick<MotionStatus, 'ignition' | 'ignitionFault' | 'ignitionUnstable'> {
    if (!this.#options.ignitionWired) return { ignition: 'not wired' };
    const fault = this.#options.ignitionInput?.fault();
    if (fault !== undefined) return { ignition: 'unknown', ignitionFault: fault };
    const unstable = this.#options.ignitionInput?.unstable?.();
    return { ignition: this.#ignition ?? 'unknown', ...(unstable !== undefined ? { ignitionUnstable: unstable } : {}) };
  }

  #engineChange(next: 'on' | 'off', time: number): void {
    const mark = this.#engineMark;
    // An off dated before the fixes that already counted the engine as running takes that time back.
    if (next === 'off' && this.#ignition === 'on' && mark !== undefined && time < mark)
      this.#engineS = Math.max(0, this.#engineS - (mark - time) / 1000);
    else this.#countEngine(time);
    this.#ignition = next;
    this.#engineChangedAt = time;
    if (next === 'on') {
      this.#engineMark = time;
      this.#engineOffSince = undefined;
    } else {
      this.#engineMark = undefined;
      this.#engineOffSince = time;
    }
    this.#emit(next === 'on' ? 'startEngineEvent' : 'stopEngineEvent', time, this.#last!.at);
  }

  /** The ignition-on time up to this GNSS time. */
  #countEngine(time: number): void {
    if (this.#ignition !== 'on') return;
    if (this.#engineMark !== undefined && time > this.#engineMark) this.#engineS += (time - this.#engineMark) / 1000;
    if (this.#engineMark === undefined || time > this.#engineMark) this.#engineMark = time;
  }

  #movementChange(change: MovementChange, then: Counts | undefined): void {
    // A silent change (unknown to moving or stopped) is only state: the next commit writes it.
    if (change.silent) return;
    this.#emit(change.kind === 'stop' ? 'stopMovingEvent' : 'startMovingEvent', change.time, change.at, then);
  }

  #emit(eventType: VehicleEventKind, time: number, at: Place, then?: Counts): void {
    const event: VehicleEvent = {
      eventType,
      time: Math.round(time),
      lat: at.lat,
      lon: at.lon,
      odometerM: Math.round(then?.odometerM ?? this.#odometer.metres),
      ...(this.#options.ignitionWired ? { engineS: Math.round(then?.engineS ?? this.#engineS) } : {}),
    };
    const sink = this.#sink;
    if (!sink) {
      this.#options.logger.warn(
        { eventType, time: new Date(time).toISOString() },
        'vehicle event after the tracker was detached: not queued',
      );
      return;
    }
    this.#options.logger.info({ eventType, time: new Date(time).toISOString(), odometerM: event.odometerM }, 'vehicle event');
    sink.recordEvent(event, { key: MOTION_META_KEY, value: this.#record() });
  }

  #record(): MotionRecord {
    const r: MotionRecord = { movement: this.#movement.snapshot(), odometerM: this.#odometer.metres };
    const edge = this.#odometer.edge();
    if (edge) r.odometerEdge = edge;
    if (this.#ignition !== undefined) r.ignition = this.#ignition;
    if (this.#engineOffSince !== undefined) r.engineOffSince = this.#engineOffSince;
    if (this.#options.ignitionWired || this.#engineS > 0) r.engineS = this.#engineS;
    if (this.#appliedSetting !== undefined) r.appliedSettingAt = this.#appliedSetting;
    if (this.#appliedEngineSetting !== undefined) r.appliedEngineSettingAt = this.#appliedEngineSetting;
    return r;
  }

  #restore(meta: MotionMeta): void {
    let stored: MotionRecord | undefined;
    try {
      stored = meta.getJson<MotionRecord>(MOTION_META_KEY);
    } catch {
      this.#options.logger.warn('stored motion state unreadable: movement unknown, odometer from the installer setting or 0');
    }
    if (stored) {
      this.#movement.restore(stored.movement as MovementSnapshot);
      this.#odometer.set(stored.odometerM);
      if (stored.odometerEdge) {
        this.#odometer.resumeFrom(stored.odometerEdge);
        // A change dated back to before this run's first fix carries the counts stored, not the bridged ones.
        this.#history.push({ time: stored.odometerEdge.time, odometerM: stored.odometerM, engineS: stored.engineS ?? 0 });
      }
      this.#ignition = stored.ignition;
      this.#engineOffSince = stored.engineOffSince;
      this.#engineS = stored.engineS ?? 0;
      this.#appliedSetting = stored.appliedSettingAt;
      this.#appliedEngineSetting = stored.appliedEngineSettingAt;
      this.#committedPrint = fingerprint(stored);
    }
    const setting = applyOdometerSetting(meta, this.#appliedSetting);
    if (setting) {
      // The installer read the vehicle's odometer where it stands now: nothing before that is bridged.
      this.#odometer.forget();
      this.#history.clear();
      this.#odometer.set(setting.metres);
      this.#appliedSetting = setting.setAt;
      this.#options.logger.info({ odometerM: setting.metres }, 'odometer set by the installer');
    }
    const engine = applyEngineHoursSetting(meta, this.#appliedEngineSetting);
    if (engine) {
      this.#engineS = engine.seconds;
      this.#appliedEngineSetting = engine.setAt;
      this.#options.logger.info({ engineHours: Math.round(engine.seconds / 360) / 10 }, 'engine hours set by the installer');
    }
  }
}

interface Fingerprint {
  /** The movement's facts, the ignition and the settings applied: each change is written at once. */
  facts: string;
  /** The odometer to STATE_ODOMETER_STEP_M and the engine time to STATE_ENGINE_STEP_S. */
  counts: string;
}

/** What makes a state write worth it; the movement's last epoch and the odometer's edge move every tenth of a second and are not in it. */
function fingerprint(r: MotionRecord): Fingerprint {
  const { last: _last, ...movement } = r.movement;
  // Places to about 10 m: the mean of a stop moves a little with every still epoch.
  const places = JSON.stringify(movement, (k, v: unknown) =>
    (k === 'lat' || k === 'lon') && typeof v === 'number' ? Math.round(v * 1e4) : v,
  );
  return {
    facts: JSON.stringify([places, r.ignition, r.engineOffSince, r.appliedSettingAt, r.appliedEngineSettingAt]),
    counts: JSON.stringify([Math.floor(r.odometerM / STATE_ODOMETER_STEP_M), Math.floor((r.engineS ?? 0) / STATE_ENGINE_STEP_S)]),
  };
}
