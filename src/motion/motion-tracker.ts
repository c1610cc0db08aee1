import type { Fix, VehicleEvent, VehicleEventKind } from '../fix/fix.js';
import type { Logger } from '../log.js';
import { MovementDetector, type MovementOptions, type MovementSnapshot, type MovementState, type Place } from './movement.js';
import { Odometer } from './odometer.js';
import { applyOdometerSetting, MOTION_META_KEY, type MotionMeta, type MotionRecord } from './motion-record.js';

/** Where the events go (the store handle's queue): the event with the state to commit beside it. */
export interface VehicleEventSink {
  recordEvent(event: VehicleEvent, persist?: () => void): void;
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
}

export interface MotionTrackerOptions {
  movement: Partial<MovementOptions> & { stillSpeedKmh: number };
  logger: Logger;
  /** Whether an ignition input is configured (else status says "not wired"). */
  ignitionWired: boolean;
  /** The ignition input (ignition.ts), started and stopped with the tracker. */
  ignitionInput?: { start(): Promise<void>; stop(): void; fault(): string | undefined };
}

/**
 * The vehicle's day (movement, engine, odometer) from every accepted epoch and the ignition input,
 * as vehicle events into the outbox. Attached once to the store handle's queue and records (a swap
 * of the database underneath holds an event until the next outbox takes it, with its state), and
 * the first attach restores what the last run stored. Each event is committed with the state that made it (Outbox.recordEvent),
 * a silent change (unknown to moving or stopped) on its own, and everything at detach: so a vehicle
 * stopped when the power went is still stopped after it, and no stop or start is made twice (the
 * same GNSS time also gives the same event id).
 */
export class MotionTracker {
  readonly #o: MotionTrackerOptions;
  readonly #movement: MovementDetector;
  readonly #odometer: Odometer;
  #ignition: 'on' | 'off' | undefined;
  #sink: VehicleEventSink | undefined;
  #meta: MotionMeta | undefined;
  #restored = false;
  /** The last accepted epoch: where the vehicle is when the ignition changes. */
  #last: { time: number; at: Place } | undefined;
  #appliedSetting: number | undefined;

  constructor(options: MotionTrackerOptions) {
    this.#o = options;
    this.#movement = new MovementDetector(options.movement);
    this.#odometer = new Odometer({ stillSpeedKmh: options.movement.stillSpeedKmh });
  }

  /** Starts the ignition input, if there is one (once: it outlives a restart of the store, like the tracker). */
  async start(): Promise<void> {
    await this.#o.ignitionInput?.start();
  }

  stop(): void {
    this.#o.ignitionInput?.stop();
  }

  attach(sink: VehicleEventSink, meta: MotionMeta): void {
    this.#sink = sink;
    this.#meta = meta;
    if (!this.#restored) {
      this.#restored = true;
      this.#restore(meta);
    }
  }

  /** Stores the state (the store is about to close or restart) and lets go of it. */
  detach(): void {
    this.#save();
    this.#sink = undefined;
    this.#meta = undefined;
  }

  /** One accepted epoch. */
  offer(fix: Fix): void {
    if (fix.lat === undefined || fix.lon === undefined) return;
    this.#last = { time: fix.time, at: { lat: fix.lat, lon: fix.lon } };
    this.#odometer.offer(fix);
    const change = this.#movement.offer(fix);
    if (!change) return;
    if (change.silent) {
      this.#save();
      return;
    }
    this.#emit(change.kind === 'stop' ? 'stopMovingEvent' : 'startMovingEvent', change.time, change.at);
  }

  /**
   * The debounced ignition changed, at this GNSS time (ignition.ts dates it). The first reading
   * with no stored state says how it is, not that it changed; one that differs from the stored
   * state is a change made while the agent was off (dated now: nobody saw it).
   */
  ignition(on: boolean, time: number | undefined): void {
    const next = on ? 'on' : 'off';
    if (this.#ignition === next) return;
    const first = this.#ignition === undefined;
    this.#ignition = next;
    // No epoch yet: no GNSS time to date it by, nor a position: the state only.
    if (first || !this.#last || time === undefined) return this.#save();
    this.#emit(on ? 'startEngineEvent' : 'stopEngineEvent', time, this.#last.at);
  }

  status(): MotionStatus {
    const since = this.#movement.since;
    return {
      state: this.#movement.state,
      ...(since !== undefined ? { since: new Date(since).toISOString() } : {}),
      odometerM: Math.round(this.#odometer.metres),
      ...this.#ignitionStatus(),
    };
  }

  /** A failing input is said as such: the state kept from before is not a reading. */
  #ignitionStatus(): Pick<MotionStatus, 'ignition' | 'ignitionFault'> {
    if (!this.#o.ignitionWired) return { ignition: 'not wired' };
    const fault = this.#o.ignitionInput?.fault();
    if (fault !== undefined) return { ignition: 'unknown', ignitionFault: fault };
    return { ignition: this.#ignition ?? 'unknown' };
  }

  #emit(eventType: VehicleEventKind, time: number, at: Place): void {
    const event: VehicleEvent = { eventType, time, lat: at.lat, lon: at.lon, odometerM: Math.round(this.#odometer.metres) };
    const record = this.#record();
    const meta = this.#meta;
    const sink = this.#sink;
    if (!sink || !meta) {
      this.#o.logger.warn({ eventType, time: new Date(time).toISOString() }, 'vehicle event after the tracker was detached: not queued');
      return;
    }
    this.#o.logger.info({ eventType, time: new Date(time).toISOString(), odometerM: event.odometerM }, 'vehicle event');
    sink.recordEvent(event, () => meta.setJson(MOTION_META_KEY, record));
  }

  #record(): MotionRecord {
    const r: MotionRecord = { movement: this.#movement.snapshot(), odometerM: this.#odometer.metres };
    if (this.#ignition !== undefined) r.ignition = this.#ignition;
    if (this.#appliedSetting !== undefined) r.appliedSettingAt = this.#appliedSetting;
    return r;
  }

  #save(): void {
    if (!this.#meta) return;
    try {
      this.#meta.setJson(MOTION_META_KEY, this.#record());
    } catch (e) {
      this.#o.logger.warn({ err: (e as Error).message }, 'motion state not stored (kept in memory; stored with the next event)');
    }
  }

  #restore(meta: MotionMeta): void {
    let stored: MotionRecord | undefined;
    try {
      stored = meta.getJson<MotionRecord>(MOTION_META_KEY);
    } catch {
      this.#o.logger.warn('stored motion state unreadable: movement unknown, odometer from the installer setting or 0');
    }
    if (stored) {
      this.#movement.restore(stored.movement as MovementSnapshot);
      this.#odometer.set(stored.odometerM);
      this.#ignition = stored.ignition;
      this.#appliedSetting = stored.appliedSettingAt;
    }
    const setting = applyOdometerSetting(meta, this.#appliedSetting);
    if (setting) {
      this.#odometer.set(setting.metres);
      this.#appliedSetting = setting.setAt;
      this.#o.logger.info({ odometerM: setting.metres }, 'odometer set by the installer');
      this.#save();
    }
  }
}
