import type { Fix } from '../fix/fix.js';
import { distanceAndBearing } from '../gnss/geodesy.js';
import { dopplerSpeed } from './doppler.js';

/**
 * Steps no vehicle can make: a position farther from the last plausible one than the speed allows
 * (the Doppler speed on both ends with a margin, or a plausible top speed without one), plus the
 * metres a standing receiver's multipath can throw. Such a fix is kept from the odometer and the
 * trip detector whether the quality gate let it through or not (multipath and receiver resets give
 * fixes with good DOP). A spell of such fixes that agree with each other for REANCHOR_MS is where
 * the vehicle is after all (the reference was the wrong one): the reference moves there, and the
 * distance of the step is not counted.
 */
export const MAX_PLAUSIBLE_MPS = 250 / 3.6;
/** What a standing receiver's worst multipath gives beside the speed (metres). */
export const JUMP_TOLERANCE_M = 25;
const DOPPLER_FACTOR = 1.5;
const DOPPLER_MARGIN_MPS = 5;
export const REANCHOR_MS = 5000;
const REANCHOR_EPOCHS = 3;

/** 'ok': counts; 'jump': an impossible step, left out; 'moved': the reference moved there without a countable path. */
export type JumpVerdict = 'ok' | 'jump' | 'moved';

export interface JumpReport {
  /** GNSS ms of the first fix of the spell. */
  time: number;
  distanceM: number;
  seconds: number;
  impliedKmh: number;
  limitKmh: number;
}

export class PositionJumps {
  #ref: Fix | undefined;
  #spell: Fix[] = [];
  #count = 0;
  readonly #onJump: ((r: JumpReport) => void) | undefined;

  constructor(options: { onJump?: (r: JumpReport) => void } = {}) {
    this.#onJump = options.onJump;
  }

  /** Spells of impossible steps seen since start. */
  get count(): number {
    return this.#count;
  }

  check(fix: Fix): JumpVerdict {
    if (fix.lat === undefined || fix.lon === undefined) return 'ok';
    const ref = this.#ref;
    if (!ref || fix.time <= ref.time) {
      if (!ref) this.#ref = fix;
      return 'ok';
    }
    const step = judge(ref, fix);
    if (step.plausible) {
      this.#ref = fix;
      this.#spell = [];
      return 'ok';
    }
    const prev = this.#spell.at(-1);
    if (prev && !judge(prev, fix).plausible) this.#spell = [];
    if (this.#spell.length === 0 && !prev) {
      this.#count++;
      this.#onJump?.({
        time: fix.time,
        distanceM: Math.round(step.d),
        seconds: (fix.time - ref.time) / 1000,
        impliedKmh: Math.round(step.impliedMps * 3.6),
        limitKmh: Math.round(step.limitMps * 3.6),
      });
    }
    this.#spell.push(fix);
    const first = this.#spell[0]!;
    if (this.#spell.length >= REANCHOR_EPOCHS && fix.time - first.time >= REANCHOR_MS) {
      this.#ref = fix;
      this.#spell = [];
      return 'moved';
    }
    return 'jump';
  }
}

function judge(a: Fix, b: Fix): { plausible: boolean; d: number; impliedMps: number; limitMps: number } {
  const dt = (b.time - a.time) / 1000;
  const d = distanceAndBearing(a.lat!, a.lon!, b.lat!, b.lon!).distance;
  const va = dopplerSpeed(a);
  const vb = dopplerSpeed(b);
  const limitMps =
    va !== undefined && vb !== undefined
      ? Math.min(MAX_PLAUSIBLE_MPS, Math.max(va, vb) * DOPPLER_FACTOR + DOPPLER_MARGIN_MPS)
      : MAX_PLAUSIBLE_MPS;
  return { plausible: d <= limitMps * dt + JUMP_TOLERANCE_M, d, impliedMps: dt > 0 ? d / dt : Infinity, limitMps };
}
