import type { AttemptResult } from './retry-decision.js';
import {
  baseLatencyMs,
  currentLatencyMs,
  drainAllowance,
  drainGapMs,
  drainLimit,
  drainStep,
  initialDrainState,
  type DrainLimit,
  type DrainSignal,
  type DrainState,
  type DrainTuning,
} from './drain-controller.js';

/** What status shows of the drain: how fast, and why no faster. */
export interface DrainStatus {
  /** Backlog requests allowed in flight now (below one: one, with a pause between them). */
  window: number;
  /** The most it may grow to (upload.concurrency, less one for the live lane; HTTP/1.1: maxConnections). */
  ceiling: number;
  /** Why the backlog goes no faster: pushback (429/503), latency (the platform's queue grows), link (timeouts, drops), ceiling, rate-ceiling, or growing. */
  limit: DrainLimit | 'rate-ceiling';
  /** Backlog events delivered per second over the last RATE_WINDOW_MS. */
  ratePerS: number;
  baseLatencyMs?: number;
  latencyMs?: number;
}

const RATE_WINDOW_MS = 30_000;

/**
 * The uploader's side of the drain controller: turns attempt results into the controller's
 * signals, keeps its state, and measures the backlog's delivered rate for status.
 */
export class DrainMeter {
  readonly #tuning: DrainTuning;
  #state: DrainState = initialDrainState();
  readonly #deliveries: number[] = [];

  constructor(tuning: DrainTuning) {
    this.#tuning = tuning;
  }

  allowance(): number {
    return drainAllowance(this.#state, this.#tuning);
  }

  /** Below a window of one, the pause after a backlog request before the next (drain-controller.ts). */
  gapMs(): number {
    return drainGapMs(this.#state);
  }

  /**
   * One attempt's result; `limited`: the backlog's window was full when it was sent. `congestion`
   * false: a failure belongs to an event already counted (an outage's probes), only answers count.
   */
  observe(result: AttemptResult, latencyMs: number, limited: boolean, nowMs: number, random: number, congestion = true): void {
    const signal = signalOf(result, latencyMs, limited);
    if (!signal || (signal.kind !== 'answer' && !congestion)) return;
    this.#state = drainStep(this.#state, signal, nowMs, this.#tuning, random);
  }

  delivered(nowMs: number): void {
    this.#deliveries.push(nowMs);
    this.#prune(nowMs);
  }

  status(nowMs: number, slots: number, maxRatePerS: number | undefined): DrainStatus {
    this.#prune(nowMs);
    const ceiling = Math.max(1, Math.min(this.#tuning.ceiling, slots - 1));
    const window = Math.min(ceiling, this.#state.window < 1 ? Math.round(this.#state.window * 100) / 100 : this.allowance());
    const span = Math.min(RATE_WINDOW_MS, Math.max(1000, nowMs - (this.#deliveries[0] ?? nowMs)));
    const ratePerS = (this.#deliveries.length * 1000) / span;
    let limit: DrainStatus['limit'] = drainLimit(this.#state, nowMs, { ceiling });
    if (maxRatePerS !== undefined && maxRatePerS > 0 && ratePerS >= 0.9 * maxRatePerS && limit === 'growing') limit = 'rate-ceiling';
    const base = baseLatencyMs(this.#state);
    const current = currentLatencyMs(this.#state);
    return {
      window,
      ceiling,
      limit,
      ratePerS: Math.round(ratePerS * 100) / 100,
      ...(base !== undefined ? { baseLatencyMs: Math.round(base) } : {}),
      ...(current !== undefined ? { latencyMs: Math.round(current) } : {}),
    };
  }

  #prune(nowMs: number): void {
    let i = 0;
    while (i < this.#deliveries.length && this.#deliveries[i]! < nowMs - RATE_WINDOW_MS) i++;
    if (i > 0) this.#deliveries.splice(0, i);
  }
}

/**
 * 429 and 503 (and other 5xx) are pushback, a deadline or a lost connection is the link; an answer
 * the platform gave in its own time (2xx, 409, a refusal) is a latency sample. A 401 reaching here
 * went through a token refresh and a retry: its latency says nothing about the platform's queue.
 */
export function signalOf(result: AttemptResult, latencyMs: number, limited: boolean): DrainSignal | undefined {
  if (result.kind === 'error') return result.errorClass === 'transient' ? { kind: 'timeout' } : undefined;
  const s = result.status;
  if (s === 429 || s >= 500) return { kind: 'pushback' };
  if (s === 408) return { kind: 'timeout' };
  if (s === 401 || s === 407) return undefined;
  return { kind: 'answer', latencyMs, windowLimited: limited };
}
