/**
 * How many backlog requests may be in flight: a scavenger in the spirit of LEDBAT
 * (RFC 6817) and TCP's AIMD. The backlog takes what the link and the platform give and yields as
 * soon as they push back, so that a lone vehicle drains a day in minutes while a thousand coming
 * back from the same outage share what the platform can serve.
 *
 * - Base latency: the smallest latency seen, kept as per-minute minima over the last
 *   `baseHistoryMin` minutes with answers (RFC 6817 2.4.1, BASE_HISTORY), so a platform that got
 *   faster is learnt and one lucky sample does not stay for ever; a round trip that grew for good
 *   (a handover) is learnt after REBASE_CUTS cuts that did not lower the delay (latencyCut).
 * - Queueing delay: the smallest of the last CURRENT_FILTER samples (RFC 6817's noise filter)
 *   minus the base. Below `targetMs` the window grows: by one per answer until the first decrease
 *   (slow start), then by (1 - delay/target)/window per answer (LEDBAT's linear controller: at most
 *   one request per round trip). Above it, the platform's queue is growing: the window shrinks.
 * - Multiplicative decrease on pushback (429, 503), timeouts, dropped connections, and a queueing
 *   delay above the target: by a factor drawn from [0.5, 0.7) (jittered: a fleet that met the same
 *   platform does not move in step), at most once per round trip (the answers of one burst are one
 *   congestion event), down to MIN_WINDOW. Below one request the window is a pace: one request,
 *   then a pause of latency x (1/window - 1) (drainGapMs). A thousand vehicles with one request
 *   each in flight are a thousand requests in the platform's queue: bench:fleet measured a 33 s
 *   queue (and timeouts, and events sent twice) against a platform that only slows down until
 *   the window could go below one. Below one it grows by half of itself per answer, scaled by the
 *   distance to the target, so a lone vehicle is back at one request within a few answers.
 * - Growth only while the window is used (RFC 6817 2.4.2: cwnd should not grow when not limited
 *   by it), never above `ceiling`.
 *
 * Pure: state and one signal in, the next state out, with the time and the random draw given.
 * The retry policy (retry-decision.ts: Retry-After, backoff, the one probe per backoff while the
 * platform refuses everything) stays where it was; this decides only the backlog's share.
 */

export interface DrainTuning {
  /** Backlog requests in flight at most: upload.concurrency less the one slot kept for the live lane. */
  ceiling: number;
  /** Queueing delay above the base latency that the backlog tolerates (upload.latencyTargetMs). */
  targetMs: number;
  /** Minutes of per-minute latency minima the base is the minimum of. */
  baseHistoryMin: number;
}

/** Why the backlog goes no faster just now (status shows it). */
export type DrainLimit = 'pushback' | 'latency' | 'link' | 'ceiling' | 'growing';

export type DrainSignal =
  /** A request answered (2xx, or any answer that is no pushback): its latency is a sample. */
  | { kind: 'answer'; latencyMs: number; windowLimited: boolean }
  /** 429 or 503: the platform asks for less. */
  | { kind: 'pushback' }
  /** No answer in time, or the connection dropped. */
  | { kind: 'timeout' };

export interface DrainState {
  /** Backlog requests allowed in flight (fractional: grows a little per answer). */
  window: number;
  slowStart: boolean;
  /** Per-minute latency minima, oldest first: minute index (floor(ms / 60 s)) and its minimum. */
  base: { minute: number; minMs: number }[];
  /** The last CURRENT_FILTER latency samples. */
  recent: number[];
  /** Monotonic ms of the last sample. */
  lastSampleAt: number;
  /** Monotonic ms of the last decrease (-Infinity: none yet). */
  lastDecreaseAt: number;
  /** What last held the window back, and when. */
  limit: DrainLimit;
  limitAt: number;
  /** The filtered latency at each cut for latency since the delay was last within the target. */
  cutLatencies: number[];
  /** Monotonic ms of the last time the base was learnt anew (-Infinity: never). */
  lastRebaseAt: number;
}

/** RFC 6817 2.4.2: the current delay is the minimum of a few recent samples (noise filter). */
export const CURRENT_FILTER = 4;

/** The smallest window: one request per 64 round trips. */
export const MIN_WINDOW = 1 / 64;

/**
 * Cuts for latency after which a delay that did not fall (by half the target) is the path's, not a
 * queue of ours: the base is learnt anew (docs/decisions/drain-controller.md).
 */
export const REBASE_CUTS = 4;

export function initialDrainState(): DrainState {
  return {
    window: 1,
    slowStart: true,
    base: [],
    recent: [],
    lastSampleAt: -Infinity,
    lastDecreaseAt: -Infinity,
    limit: 'growing',
    limitAt: -Infinity,
    cutLatencies: [],
    lastRebaseAt: -Infinity,
  };
}

/** The base latency (ms), or undefined before the first sample. */
export function baseLatencyMs(s: DrainState): number | undefined {
  return s.base.length === 0 ? undefined : Math.min(...s.base.map((b) => b.minMs));
}

/** The filtered current latency (ms), or undefined before the first sample. */
export function currentLatencyMs(s: DrainState): number | undefined {
  return s.recent.length === 0 ? undefined : Math.min(...s.recent);
}

/** Queueing delay above the base (ms); 0 before any sample. */
export function queueingDelayMs(s: DrainState): number {
  const base = baseLatencyMs(s);
  const cur = currentLatencyMs(s);
  return base === undefined || cur === undefined ? 0 : Math.max(0, cur - base);
}

/**
 * The next state after `signal` at `nowMs`. `random` in [0, 1) draws the decrease factor.
 */
export function drainStep(s: DrainState, signal: DrainSignal, nowMs: number, tuning: DrainTuning, random: number): DrainState {
  const ceiling = Math.max(1, tuning.ceiling);
  if (signal.kind === 'pushback' || signal.kind === 'timeout') {
    return decrease(s, nowMs, random, signal.kind === 'pushback' ? 'pushback' : 'link');
  }
  const latency = Math.max(0, signal.latencyMs);
  const minute = Math.floor(nowMs / 60_000);
  const base = [...s.base];
  const last = base.at(-1);
  if (last && last.minute === minute) base[base.length - 1] = { minute, minMs: Math.min(last.minMs, latency) };
  else base.push({ minute, minMs: latency });
  // The last baseHistoryMin minutes that had answers, however long ago: after an outage the base
  // is still the one measured before it, not the first answers out of an already queued platform
  // (a latecomer taking a standing queue for the base: LEDBAT's known weakness, RFC 6817 4.4).
  if (base.length > Math.max(1, tuning.baseHistoryMin)) base.splice(0, base.length - Math.max(1, tuning.baseHistoryMin));
  // The filter holds samples of the last moments only: a vehicle sending one backlog request every
  // few seconds (a window below one) must not judge today's queue by a sample of minutes ago.
  const fresh = nowMs - s.lastSampleAt <= Math.max(1000, 2 * latency);
  const recent = fresh ? [...s.recent, latency].slice(-CURRENT_FILTER) : [latency];
  const next: DrainState = { ...s, base, recent, lastSampleAt: nowMs };
  const queueing = queueingDelayMs(next);
  if (queueing > tuning.targetMs) return latencyCut(next, nowMs, random, tuning);
  next.cutLatencies = [];
  if (!signal.windowLimited) return next;
  const offTarget = tuning.targetMs > 0 ? 1 - queueing / tuning.targetMs : 1;
  const w = next.window;
  const grown = next.slowStart ? w + 1 : w < 1 ? w + (offTarget * w) / 2 : w + offTarget / w;
  return { ...next, window: Math.min(ceiling, grown) };
}

/** The whole requests the window allows in flight now. */
export function drainAllowance(s: DrainState, tuning: Pick<DrainTuning, 'ceiling'>): number {
  return Math.max(1, Math.min(Math.max(1, tuning.ceiling), Math.floor(s.window)));
}

/**
 * Below a window of one: the pause (ms) after a backlog request before the next, so that one
 * request per latency / window goes out; 0 at one and above.
 */
export function drainGapMs(s: DrainState): number {
  if (s.window >= 1) return 0;
  return (currentLatencyMs(s) ?? 0) * (1 / s.window - 1);
}

/** Why the backlog goes no faster now: a slowdown is named for a minute after it happened. */
export function drainLimit(s: DrainState, nowMs: number, tuning: Pick<DrainTuning, 'ceiling'>): DrainLimit {
  if ((s.limit === 'pushback' || s.limit === 'latency' || s.limit === 'link') && nowMs - s.limitAt < 60_000) return s.limit;
  return Math.floor(s.window) >= tuning.ceiling ? 'ceiling' : 'growing';
}

/**
 * The delay is above the target: cut the window, unless REBASE_CUTS cuts did not lower it. A queue
 * of our own shrinks as we yield; a round trip that grew for good (a cellular handover: 300 ->
 * 450 ms) does not, and the per-minute base history would hold the old base for baseHistoryMin
 * answered minutes, the window at its least all that time. Then the base is the latency now, at
 * most once per baseHistoryMin minutes: a standing queue of others (LEDBAT's latecomer weakness)
 * is taken for the base no faster than the history itself would.
 */
function latencyCut(s: DrainState, nowMs: number, random: number, tuning: DrainTuning): DrainState {
  const current = currentLatencyMs(s) ?? 0;
  const cuts = s.cutLatencies;
  const before = cuts.at(-REBASE_CUTS);
  const rebaseDue = nowMs - s.lastRebaseAt >= Math.max(1, tuning.baseHistoryMin) * 60_000;
  if (cuts.length >= REBASE_CUTS && before !== undefined && before - current < tuning.targetMs / 2 && rebaseDue)
    return { ...s, base: [{ minute: Math.floor(nowMs / 60_000), minMs: current }], cutLatencies: [], lastRebaseAt: nowMs };
  const cut = decrease(s, nowMs, random, 'latency');
  return cut.lastDecreaseAt === nowMs ? { ...cut, cutLatencies: [...cuts, current].slice(-2 * REBASE_CUTS) } : cut;
}

function decrease(s: DrainState, nowMs: number, random: number, why: DrainLimit): DrainState {
  // One decrease per round trip: the answers of requests sent before the last decrease belong to it.
  const rtt = currentLatencyMs(s) ?? 0;
  if (nowMs - s.lastDecreaseAt < rtt) return { ...s, slowStart: false };
  const factor = 0.5 + 0.2 * Math.min(Math.max(random, 0), 0.999_999);
  return { ...s, window: Math.max(MIN_WINDOW, s.window * factor), slowStart: false, lastDecreaseAt: nowMs, limit: why, limitAt: nowMs };
}
