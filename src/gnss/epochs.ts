/**
 * Stage 3: sentences to epochs. Sentences that share a UTC time form one epoch; sentences without a
 * time (GSA, GSV, VTG, and ZDA, see timeOf) belong to the epoch of the last timed sentence. An epoch is emitted as soon
 * as it is complete: when a sentence with another time arrives, or earlier, once the sentence that
 * ended the last two epochs arrives again (gpsd's "cycle ender" idea, driver_nmea0183.c), so the
 * latency is at most one epoch.
 *
 * The date comes from RMC or ZDA and is carried forward (across midnight when the time of day
 * wraps); an epoch before any date cannot be timestamped and is counted, not emitted.
 */
import { EpochState, type Carry } from './epoch-state.js';
import type { Fix, FixMode } from '../fix/fix.js';
import { distanceAndBearing } from './geodesy.js';
import type { Sentence } from './sentences/types.js';
import { DAY_MS } from './sentences/fields.js';
import { Sky } from './sky.js';

export interface EpochCounters {
  epochs: number;
  /** Epochs dropped because no RMC/ZDA had given a date yet. */
  undated: number;
  /** Timed sentences for an epoch already emitted early (the learned cycle end was wrong). */
  late: number;
  /** Untimed sentences dropped while waiting for the first timed one. */
  orphans: number;
  /** The epoch in progress at the end of the input, not known to be complete. */
  truncated: number;
}

export interface EpochAssemblerOptions {
  /** Applied to each epoch's time (the live agent's week-rollover correction); identity if absent. */
  correctTime?: (timeMs: number) => number;
  /** Attach the satellites in view to each fix (the status tools want them; `nmea decode` does not). */
  satellites?: boolean;
  /** Without `satellites`: keep the sky's used marks for `satellites()` (the daemon's status) per epoch. */
  sky?: boolean;
}

const HALF_DAY_MS = DAY_MS / 2;

interface CycleEnd {
  key: string | undefined;
  seen: number;
  /** Epochs in a row that must end with the same sentence before it is trusted as the cycle end. */
  need: number;
}
const MAX_HELD = 64;

/**
 * The time that places a sentence in an epoch. ZDA's does not: some receivers send it ahead of
 * the cycle (the AC12's ZDA runs two seconds early), so ZDA only lends its date to the epoch it
 * arrives in (see EpochState).
 */
function timeOf(s: Sentence): number | undefined {
  switch (s.kind) {
    case 'GGA':
    case 'RMC':
    case 'GLL':
    case 'GNS':
      return s.timeOfDay;
    default:
      return undefined;
  }
}

export class EpochAssembler {
  readonly counters: EpochCounters = { epochs: 0, undated: 0, late: 0, orphans: 0, truncated: 0 };
  readonly sky = new Sky();
  #emit: (fix: Fix) => void;
  #options: EpochAssemblerOptions;
  #current: EpochState | undefined;
  /** Time of day of an epoch emitted early, until a sentence with another time arrives. */
  #closedTod: number | undefined;
  #held: Sentence[] = [];
  #date: number | undefined;
  #lastTod: number | undefined;
  #carry: Carry = { mode: 0, hasAltitude: false, gsaUsed: 0 };
  #previous: Fix | undefined;
  /**
   * The learned cycle end, per millisecond-of-second of the epoch: a 10 Hz receiver that adds RMC
   * and ZDA to the whole-second epoch only (rst39) has two cycle shapes, told apart this way.
   */
  #enders = new Map<number, CycleEnd>();
  /** The cycle end the early emission relied on, until the next epoch starts. */
  #closedBy: CycleEnd | undefined;
  #lastTimedKey = '';

  constructor(emit: (fix: Fix) => void, options: EpochAssemblerOptions = {}) {
    this.#emit = emit;
    this.#options = options;
  }

  add(s: Sentence): void {
    if (s.kind === 'GSV') this.sky.add(s);
    const tod = timeOf(s);
    if (tod !== undefined && tod !== this.#current?.timeOfDay) {
      if (this.#current !== undefined) this.#close(true);
      if (tod === this.#closedTod) {
        this.counters.late++;
        this.#distrust();
        return;
      }
      this.#closedTod = undefined;
      this.#closedBy = undefined;
      this.#current = new EpochState(tod, this.#carry);
      for (const h of this.#held) this.#current.apply(h, false);
      this.#held.length = 0;
    }
    const epoch = this.#current;
    if (epoch === undefined) {
      // A sentence after the learned cycle end: the receiver's cycle is not what we learned.
      this.#distrust();
      if (this.#held.length >= MAX_HELD) {
        this.#held.shift();
        this.counters.orphans++;
      }
      this.#held.push(s);
      return;
    }
    const key = epoch.apply(s, tod !== undefined);
    const groupDone = s.kind !== 'GSV' || s.part === s.total;
    const end = this.#enders.get(epoch.timeOfDay % 1000);
    if (end !== undefined && key === end.key && end.seen >= end.need && groupDone) {
      this.#closedBy = end;
      this.#close(false);
    }
  }

  /**
   * End of input. The epoch in progress is emitted when the last timed sentence of the previous
   * epoch arrived in it too (gpsd's cycle end); otherwise it is dropped and counted, as nothing says
   * it was complete (a log cut mid-cycle), and gpsd does not report it either.
   */
  flush(): void {
    const epoch = this.#current;
    if (epoch !== undefined) {
      if (this.#lastTimedKey !== '' && epoch.has(this.#lastTimedKey)) this.#close(false);
      else {
        this.counters.truncated++;
        this.#current = undefined;
      }
    }
    this.#held.length = 0;
  }

  /**
   * Receivers with mixed cycles (e.g. RMC and ZDA once a second among 10 Hz GGAs, rst39) defeat
   * the learned cycle end; each miss doubles the evidence needed before trusting one again.
   */
  #distrust(): void {
    const end = this.#closedBy;
    if (end === undefined) return;
    this.#closedBy = undefined;
    end.key = undefined;
    end.seen = 0;
    end.need = Math.min(end.need * 2, 1024);
  }

  #close(byTimeChange: boolean): void {
    const epoch = this.#current;
    if (epoch === undefined) return;
    this.#current = undefined;
    this.#lastTimedKey = epoch.lastTimedKey;
    if (byTimeChange) {
      const bucket = epoch.timeOfDay % 1000;
      let end = this.#enders.get(bucket);
      if (end === undefined) {
        // Bounded: at most 1000 buckets, in practice one per epoch of a second.
        end = { key: undefined, seen: 0, need: 2 };
        this.#enders.set(bucket, end);
      }
      if (epoch.lastKey === end.key) end.seen++;
      else {
        end.key = epoch.lastKey;
        end.seen = 1;
      }
    } else {
      this.#closedTod = epoch.timeOfDay;
    }
    this.#carry = {
      mode: epoch.mode === 0 ? this.#carry.mode : epoch.mode,
      // gpsd keeps the altitude of its merged fix until a fix is lost.
      hasAltitude: epoch.altMSL !== undefined || (this.#carry.hasAltitude && epoch.mode !== 1),
      gsaUsed: epoch.gsaSeen ? epoch.used.size : this.#carry.gsaUsed,
    };
    const date = this.#dateFor(epoch);
    if (date === undefined) {
      this.counters.undated++;
      return;
    }
    let time = date + epoch.timeOfDay;
    if (this.#options.correctTime) time = this.#options.correctTime(time);
    const fix = this.#toFix(epoch, time);
    this.counters.epochs++;
    this.#emit(fix);
  }

  #dateFor(epoch: EpochState): number | undefined {
    if (epoch.date !== undefined) this.#date = epoch.date;
    else if (this.#date !== undefined && this.#lastTod !== undefined && epoch.timeOfDay < this.#lastTod - HALF_DAY_MS) this.#date += DAY_MS;
    this.#lastTod = epoch.timeOfDay;
    return this.#date;
  }

  #toFix(e: EpochState, time: number): Fix {
    const mode = (e.mode === 2 || e.mode === 3 ? e.mode : 1) as FixMode;
    const fix: Fix = { time, mode };
    const used = e.gsaSeen ? e.used.size : e.ggaSatellites;
    if (mode >= 2 && e.lat !== undefined && e.lon !== undefined) {
      fix.lat = e.lat;
      fix.lon = e.lon;
      // gpsd reports an altitude with 3D fixes only.
      if (mode === 3 && e.altMSL !== undefined) fix.altMSL = e.altMSL;
      let speed = e.speed;
      let track = e.track;
      let derived = false;
      const prev = this.#previous;
      // No speed or course from the receiver (GGA-only streams): derive them from the previous
      // position, as gpsd's gpsd_error_model() does.
      if (speed === undefined && prev?.lat !== undefined && prev.lon !== undefined && time > prev.time) {
        const db = distanceAndBearing(prev.lat, prev.lon, e.lat, e.lon);
        speed = db.distance / ((time - prev.time) / 1000);
        if (track === undefined && db.distance > 0) track = db.bearing;
        derived = true;
      }
      if (speed !== undefined) fix.speed = speed;
      if (derived) fix.speedDerived = true;
      if (track !== undefined) fix.track = track;
    }
    if (used !== undefined) fix.satellitesUsed = used;
    if (e.hdop !== undefined) fix.hdop = e.hdop;
    if (e.pdop !== undefined) fix.pdop = e.pdop;
    if (e.vdop !== undefined) fix.vdop = e.vdop;
    if (e.quality !== undefined) fix.quality = e.quality;
    if (this.#options.satellites) fix.satellites = this.sky.snapshot(e.used, [...e.used].join());
    else if (this.#options.sky) this.sky.mark(e.used, [...e.used].join());
    this.#previous = fix;
    return fix;
  }
}
