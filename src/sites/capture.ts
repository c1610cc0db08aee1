import { AgentError, type ErrorCode } from '../errors.js';
import type { Fix } from '../fix/fix.js';
import { averageFixes, hasPosition, type AveragedPosition, type PositionedFix } from './average.js';
import type { FixFeed } from '../fix-feed/fix-feed.js';

/**
 * `location here`: collect N fixes that pass the quality gate from a stationary receiver, average
 * them, and refuse (with the reason and what to do) when the result is not a trustworthy point.
 */

/**
 * Default refusal limit for the spread (largest distance of a sample from the average).
 * The platform matches a vehicle's arrival to a location within tens to hundreds of metres; a
 * receiver standing still under open sky keeps its samples within about 5 m, and near walls
 * (multipath) within 10-15 m. More than 25 m means the vehicle moved or the signal is too poor for
 * the point to be worth storing.
 */
export const DEFAULT_MAX_SPREAD_M = 25;
export const DEFAULT_SAMPLES = 30;
/** Median speed above this (3.6 km/h) means the vehicle is not standing still. */
export const DEFAULT_MAX_SPEED_MPS = 1;

/** 60 s to get a fix, then 2 s per sample (receivers report at 1 Hz or faster). */
export function defaultTimeoutMs(samples: number): number {
  return 60_000 + 2000 * samples;
}

export interface CaptureOptions {
  samples: number;
  maxSpreadM: number;
  timeoutMs: number;
  maxSpeedMps?: number;
  /**
   * The quality gate: undefined to accept the fix, or the reason it is rejected ("HDOP 12 > 5").
   * Fixes without a 3D position never reach it: mode 3 is required here whatever the gate says.
   */
  gate?: (fix: PositionedFix) => string | undefined;
  signal?: AbortSignal;
  /** Called after every accepted fix. */
  onProgress?: (accepted: number, target: number) => void;
}

export interface CaptureResult extends AveragedPosition {
  /** Fixes seen in total, and why the others were not used. */
  seen: number;
  rejected: Record<string, number>;
}

export class CaptureError extends AgentError {
  constructor(code: ErrorCode, message: string, details: Record<string, unknown>) {
    // A refusal to store a bad point is not retried automatically: the person decides.
    super(code, message, { class: 'rejected', retryable: false, details });
    this.name = 'CaptureError';
  }
}

export async function captureLocation(feed: FixFeed, options: CaptureOptions): Promise<CaptureResult> {
  const stop = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    stop.abort(new Error('capture timeout'));
  }, options.timeoutMs);
  const onOuterAbort = () => stop.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', onOuterAbort, { once: true });

  const accepted: PositionedFix[] = [];
  const rejected: Record<string, number> = {};
  let seen = 0;
  let bestMode = 0;
  const reject = (reason: string) => {
    rejected[reason] = (rejected[reason] ?? 0) + 1;
  };
  try {
    for await (const fix of feed.fixes(stop.signal)) {
      seen++;
      bestMode = Math.max(bestMode, positionMode(fix));
      if (!hasPosition(fix)) reject('no position');
      else if (fix.mode !== 3) reject(fix.mode === 2 ? '2D fix only' : 'no fix');
      else {
        const why = options.gate?.(fix);
        if (why !== undefined) reject(why);
        else {
          accepted.push(fix);
          options.onProgress?.(accepted.length, options.samples);
          if (accepted.length >= options.samples) break;
        }
      }
    }
  } catch (e) {
    if (!stop.signal.aborted) throw e;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onOuterAbort);
  }
  if (options.signal?.aborted)
    throw options.signal.reason instanceof Error ? options.signal.reason : new AgentError('ABORTED', 'interrupted', { class: 'internal' });

  const details = { source: feed.description, seen, accepted: accepted.length, wanted: options.samples, rejected };
  const why = Object.entries(rejected)
    .sort((a, b) => b[1] - a[1])
    .map(([r, n]) => `${n} ${r}`)
    .join(', ');
  const ended = timedOut ? `in ${Math.round(options.timeoutMs / 1000)} s` : 'before the source ended';
  if (accepted.length < options.samples) {
    if (bestMode < 3) {
      const diagnosis = seen === 0 ? feed.diagnose?.() : undefined;
      const what =
        seen === 0
          ? `no fix at all came${diagnosis ? ` (${diagnosis})` : ''}`
          : bestMode === 2
            ? `only 2D fixes came (${seen} fixes)`
            : `no position came (${seen} epochs without a fix)`;
      throw new CaptureError(
        'LOCATION_NO_3D_FIX',
        `no 3D fix from ${feed.description} ${ended}: ${what}. A location needs a 3D fix (4 or more satellites): move the vehicle to open sky, check the antenna, and try again`,
        details,
      );
    }
    throw new CaptureError(
      'LOCATION_TOO_FEW_FIXES',
      `only ${accepted.length} of ${options.samples} fixes from ${feed.description} passed the quality gate ${ended} (not used: ${why || 'none'}). Wait for a better fix, or lower --samples`,
      details,
    );
  }
  const avg = averageFixes(accepted);
  const result: CaptureResult = { ...avg, seen, rejected };
  const maxSpeed = options.maxSpeedMps ?? DEFAULT_MAX_SPEED_MPS;
  if (avg.medianSpeedMps !== undefined && avg.medianSpeedMps > maxSpeed) {
    throw new CaptureError(
      'LOCATION_MOVING',
      `the vehicle is moving (median speed ${(avg.medianSpeedMps * 3.6).toFixed(1)} km/h over ${avg.samples} fixes): stop at the site and run the command again`,
      { ...details, medianSpeedMps: avg.medianSpeedMps },
    );
  }
  if (avg.spreadM > options.maxSpreadM) {
    throw new CaptureError(
      'LOCATION_SPREAD_TOO_LARGE',
      `the ${avg.samples} fixes spread over ${avg.spreadM.toFixed(1)} m (RMS ${avg.rmsM.toFixed(1)} m), more than the limit of ${options.maxSpreadM} m (--max-spread): the vehicle moved or buildings reflect the signal. Move to open sky and try again, or raise --max-spread if this accuracy is enough for the site`,
      { ...details, spreadM: avg.spreadM, rmsM: avg.rmsM },
    );
  }
  return result;
}

/** Readable reasons for the GNSS quality gate's rejection codes (src/gnss/quality-gate.ts). */
const GATE_REASONS: Record<string, string> = {
  noFix: 'no fix',
  modeTooLow: '2D fix only',
  noPosition: 'no position',
  outOfRange: 'position out of range',
  nullIsland: 'lat 0, lon 0',
  hdopTooHigh: 'HDOP above quality.maxHdop',
  dateTooOld: 'date before the release (receiver clock wrong)',
  timeBackwards: 'time went backwards',
  timeRepeated: 'repeated epoch',
  impossibleJump: 'impossible jump',
};

/** The capture's gate from the GNSS quality gate: mode 3 required, the configured limits otherwise. */
export function gateFrom(check: (fix: Fix) => string | undefined): (fix: PositionedFix) => string | undefined {
  return (fix) => {
    const reason = check(fix);
    return reason === undefined ? undefined : (GATE_REASONS[reason] ?? reason);
  };
}

function positionMode(fix: Fix): number {
  return hasPosition(fix) ? fix.mode : 1;
}
