/**
 * The `path` recording policy: spend positions where the path bends, and several at every stop.
 *
 * While moving it is an opening window (a streaming Douglas-Peucker, as in Meratnia & de By,
 * "Spatiotemporal compression techniques for moving point objects", 2004) with the time-synchronised
 * distance: the fixes seen since the last recorded one are kept, and each new fix is tried as the end
 * of a straight segment travelled at constant speed from the last recorded fix. When any kept fix
 * lies more than `pathToleranceM` from where that segment puts the vehicle at the fix's own time, the
 * previous fix (the last end that still fitted) is recorded and the window starts again there. The
 * platform draws and interpolates between delivered positions in exactly that way, so every epoch
 * while moving stays within the tolerance of the delivered track, whatever the road does; a straight
 * road at constant speed costs only the `maxIntervalS` heartbeat. Recording is one fix late (the
 * window must see the next fix to know the previous one was needed): harmless, because every fix
 * carries its own GNSS time.
 *
 * Stops: the fix that enters the stopped state is recorded, and the last fix still below the
 * stopped speed when the vehicle moves off, so the departure time is exact rather than smeared
 * across the stop: every stop has two positions of its own, a traffic light as a delivery. A stop
 * that lasts gets one more `stopRepeatS` in (120 s: the platform sees a delivery stop confirmed
 * while it lasts; at 20 s it cost a third event at most red lights),
 * then a heartbeat every `stoppedHeartbeatS`, and once parked (stopped for longer than that) every
 * `parkedHeartbeatS`. Jitter at a standstill draws
 * nothing; a creep (the receiver reports speed and the position has moved more than the tolerance)
 * is recorded.
 */
import type { Fix, RecordedFix } from '../fix/fix.js';
import { distanceAndBearing } from './geodesy.js';
import { LateWindow } from './late-window.js';
import { SpeedHysteresis } from './speed-hysteresis.js';

export interface PathPolicyOptions {
  pathToleranceM: number;
  maxIntervalS: number;
  minIntervalS: number;
  stoppedSpeedKmh: number;
  movingSpeedKmh: number;
  stopRepeatS: number;
  stoppedHeartbeatS: number;
  parkedHeartbeatS: number;
  /** 0: decide each position as it comes (one fix late); more: choose positions this late (late-window.ts). */
  maxDelayS: number;
  /** With maxDelayS: no moving epoch further than this from the delivered track, metres. */
  pathMaxDeviationM: number;
}

/** A fix in metres east/north of the window's anchor, with its time in ms since the anchor. */
interface Point {
  fix: Fix;
  t: number;
  x: number;
  y: number;
}

/** Mean metres per degree of latitude; a local plane is exact enough for deviations of metres over a few km. */
const M_PER_DEG = 111_195;
/** Bounds the window (and the work per fix) when a long heartbeat meets a 10 Hz receiver. */
const MAX_WINDOW = 2000;

export class PathPolicy {
  readonly #options: PathPolicyOptions;
  readonly #hysteresis: SpeedHysteresis;
  /** The last recorded fix (as offered, before the reason was added). */
  #anchor: Fix | undefined;
  #cosLat = 1;
  /** Fixes since the anchor, not recorded, oldest first; the last one is the current candidate end. */
  #window: Point[] = [];
  #previous: Fix | undefined;
  /** While stopped: the last fix below stoppedSpeedKmh (the departure is recorded from it). */
  #lastStill: Fix | undefined;
  /** GNSS time the current stop was recorded, and whether its second position was. */
  #stopAt: number | undefined;
  #stopRepeated = false;
  /** Entering the stopped state came sooner than minIntervalS after the last record. */
  #stopPending = false;
  /** When the policy decides late: the moving window in its place. */
  readonly #late: LateWindow | undefined;

  constructor(options: PathPolicyOptions) {
    this.#options = options;
    this.#hysteresis = new SpeedHysteresis(options);
    if (options.maxDelayS > 0)
      this.#late = new LateWindow({
        softM: options.pathToleranceM,
        hardM: Math.max(options.pathToleranceM, options.pathMaxDeviationM),
        maxDelayS: options.maxDelayS,
        minIntervalS: options.minIntervalS,
      });
  }

  offer(fix: Fix): RecordedFix[] {
    const out: RecordedFix[] = [];
    const { state, changed, speedKmh } = this.#hysteresis.update(fix);
    const previous = this.#previous;
    this.#previous = fix;
    if (this.#anchor === undefined) {
      out.push(this.#record(fix, 'first'));
      if (state === 'stopped') this.#enterStop(fix);
      return out;
    }
    // A gap in the fixes (tunnel, garage, lost sky): the last fix before it says where reception stopped.
    const last = this.#waiting();
    if (last && fix.time - last.time > this.#options.maxIntervalS * 1000) this.#close(last, 'gap', out);

    if (state === 'moving') {
      if (changed) {
        this.#stopAt = undefined;
        this.#stopPending = false;
        // Moving off: the last fix still below the stopped speed marks the departure (not the
        // creep between it and the moving threshold), and the window starts from it. Arrival and
        // departure are then two positions of the stop itself, whatever its length.
        const still = this.#lastStill ?? previous;
        this.#lastStill = undefined;
        if (still && still !== this.#anchor && this.#mayRecord(still)) out.push(this.#record(still, 'departure', true));
      }
      this.#extend(fix, out);
      return out;
    }
    const still = speedKmh === undefined || speedKmh < this.#options.stoppedSpeedKmh;
    if (still) this.#lastStill = fix;
    if (changed || this.#stopPending) {
      // Arriving: close the window with this fix as its end, then record it as the stop.
      if (this.#late) out.push(...this.#late.close(fix).map((f) => this.#decided(f)));
      else if (this.#window.length > 0) this.#breaks(this.#point(fix), out);
      if (this.#mayRecord(fix)) {
        out.push(this.#record(fix, 'stopped', true));
        this.#enterStop(fix);
      } else this.#stopPending = true;
      return out;
    }
    const anchor = this.#anchor;
    const sinceRecord = fix.time - anchor.time;
    // The repeat only on a still fix: one taken while creeping off would stand where the departure
    // (the last still fix, a moment earlier) must go, and the stop would keep one position.
    if (still && !this.#stopRepeated && this.#stopAt !== undefined && fix.time - this.#stopAt >= this.#options.stopRepeatS * 1000) {
      this.#stopRepeated = true;
      out.push(this.#record(fix, 'stop'));
    } else if (sinceRecord >= heartbeatS(this.#options, this.#stopAt, anchor.time) * 1000) out.push(this.#record(fix, 'heartbeat'));
    else if (
      speedKmh !== undefined &&
      speedKmh >= this.#options.stoppedSpeedKmh &&
      this.#distance(anchor, fix) > this.#options.pathToleranceM
    )
      out.push(this.#record(fix, 'creep'));
    return out;
  }

  /** At shutdown: the window's last fix, so the delivered track ends where the receiver's did. */
  flush(): RecordedFix[] {
    const out: RecordedFix[] = [];
    const last = this.#waiting() ?? (this.#stopAt !== undefined ? this.#previous : undefined);
    if (last && last !== this.#anchor) this.#close(last, 'last', out);
    return out;
  }

  /** The newest fix waiting in the window (not recorded), if any. */
  #waiting(): Fix | undefined {
    return this.#late ? this.#late.last() : this.#window.at(-1)?.fix;
  }

  /** Records `end` for `reason`, after the positions the late window still needs before it. */
  #close(end: Fix, reason: string, out: RecordedFix[]): void {
    if (this.#late) out.push(...this.#late.close(end).map((f) => this.#decided(f)));
    out.push(this.#record(end, reason));
  }

  /** A position the late window chose: the window goes on from it by itself. */
  #decided(fix: Fix): RecordedFix {
    this.#anchor = fix;
    return { ...fix, reason: 'path' };
  }

  /** Tries `fix` as the end of the window's segment: records the previous end when it no longer fits. */
  #extend(fix: Fix, out: RecordedFix[]): void {
    if (this.#late) {
      out.push(...this.#late.push(fix).map((f) => this.#decided(f)));
      // The heartbeat: a position the path needs anyway, decided early, or else this fix.
      while (fix.time - this.#anchor!.time >= this.#options.maxIntervalS * 1000 && this.#mayRecord(fix)) {
        const needed = this.#late.early();
        if (needed) out.push(this.#decided(needed));
        else {
          this.#close(fix, 'interval', out);
          break;
        }
      }
      return;
    }
    let p = this.#point(fix);
    if (this.#window.length > 0 && this.#breaks(p, out)) p = this.#point(fix);
    const sinceRecord = p.t;
    if ((sinceRecord >= this.#options.maxIntervalS * 1000 || this.#window.length >= MAX_WINDOW) && this.#mayRecord(fix)) {
      out.push(this.#record(fix, 'interval'));
      return;
    }
    this.#window.push(p);
  }

  /**
   * True (and the window's last fix recorded) when some fix of the window lies more than the
   * tolerance from the anchor-to-`end` segment at its own time.
   */
  #breaks(end: Point, out: RecordedFix[]): boolean {
    const last = this.#window.at(-1);
    if (!last || !(end.t > 0) || !this.#mayRecord(last.fix)) return false;
    const tol2 = this.#options.pathToleranceM ** 2;
    for (const b of this.#window) {
      const u = b.t / end.t;
      const dx = b.x - end.x * u;
      const dy = b.y - end.y * u;
      if (dx * dx + dy * dy > tol2) {
        out.push(this.#record(last.fix, 'path'));
        return true;
      }
    }
    return false;
  }

  #point(fix: Fix): Point {
    const a = this.#anchor!;
    return {
      fix,
      t: fix.time - a.time,
      x: ((fix.lon ?? 0) - (a.lon ?? 0)) * M_PER_DEG * this.#cosLat,
      y: ((fix.lat ?? 0) - (a.lat ?? 0)) * M_PER_DEG,
    };
  }

  #mayRecord(fix: Fix): boolean {
    return this.#anchor === undefined || fix.time - this.#anchor.time >= this.#options.minIntervalS * 1000;
  }

  #enterStop(fix: Fix): void {
    this.#stopAt = fix.time;
    this.#stopRepeated = false;
    this.#stopPending = false;
  }

  #distance(a: Fix, b: Fix): number {
    if (a.lat === undefined || a.lon === undefined || b.lat === undefined || b.lon === undefined) return 0;
    return distanceAndBearing(a.lat, a.lon, b.lat, b.lon).distance;
  }

  #record(fix: Fix, reason: string, transition = false): RecordedFix {
    this.#anchor = fix;
    this.#cosLat = Math.cos(((fix.lat ?? 0) * Math.PI) / 180);
    this.#window = [];
    this.#late?.reset(fix);
    return transition ? { ...fix, transition: true, reason } : { ...fix, reason };
  }
}

/**
 * The heartbeat interval after a record at `lastRecordMs` in a stop that began at `stopAtMs`: the
 * stopped one until the stop has lasted stoppedHeartbeatS, then the parked one (never shorter).
 */
export function heartbeatS(
  o: { stoppedHeartbeatS: number; parkedHeartbeatS: number },
  stopAtMs: number | undefined,
  lastRecordMs: number,
): number {
  const parked = stopAtMs !== undefined && lastRecordMs - stopAtMs >= o.stoppedHeartbeatS * 1000;
  return parked ? Math.max(o.stoppedHeartbeatS, o.parkedHeartbeatS) : o.stoppedHeartbeatS;
}
