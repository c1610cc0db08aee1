import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/system/clock.js';
import {
  baseLatencyMs,
  drainAllowance,
  drainGapMs,
  drainLimit,
  MIN_WINDOW,
  drainStep,
  initialDrainState,
  queueingDelayMs,
  type DrainSignal,
  type DrainState,
  type DrainTuning,
} from '../../src/upload/drain-controller.js';
import { DrainMeter } from '../../src/upload/drain-meter.js';

/**
 * The backlog's window as a table: latency samples and answers in, window out, on the
 * manual clock. Each row: what happens at which clock time, and the window and limit after it.
 */
const TUNING: DrainTuning = { ceiling: 32, targetMs: 100, baseHistoryMin: 10 };
const ok = (latencyMs: number, windowLimited = true): DrainSignal => ({ kind: 'answer', latencyMs, windowLimited });

interface Row {
  atMs: number;
  signal: DrainSignal;
  random?: number;
  window: number;
  limit?: string;
}

function run(rows: Row[], start: DrainState = initialDrainState(), tuning = TUNING): DrainState {
  const clock = new ManualClock();
  let s = start;
  for (const [i, r] of rows.entries()) {
    clock.advance(r.atMs - clock.monotonicMs());
    s = drainStep(s, r.signal, clock.monotonicMs(), tuning, r.random ?? 0);
    expect(s.window, `row ${i} window`).toBeCloseTo(r.window, 6);
    if (r.limit) expect(drainLimit(s, clock.monotonicMs(), tuning), `row ${i} limit`).toBe(r.limit);
  }
  return s;
}

describe('drain controller (LEDBAT-like window of backlog requests in flight)', () => {
  it('slow start: one more per answer at the base latency, up to the ceiling', () => {
    const rows: Row[] = [];
    for (let k = 1; k <= 40; k++) rows.push({ atMs: k * 10, signal: ok(300), window: Math.min(32, 1 + k) });
    const s = run(rows);
    expect(drainAllowance(s, TUNING)).toBe(32);
    expect(drainLimit(s, 400, TUNING)).toBe('ceiling');
  });

  it('does not grow while the window is not used (application-limited)', () => {
    run([
      { atMs: 0, signal: ok(300), window: 2 },
      { atMs: 10, signal: ok(300, false), window: 2 },
      { atMs: 20, signal: ok(300, false), window: 2 },
    ]);
  });

  it('latency above base + target: halves (jittered 0.5..0.7), at most once per round trip, then grows linearly', () => {
    const s = run([
      ...Array.from({ length: 9 }, (_, k): Row => ({ atMs: k * 10, signal: ok(300), window: 2 + k })), // 10
      // Queueing delay: the filtered current latency is the least of the last four samples.
      { atMs: 100, signal: ok(450), window: 11 },
      { atMs: 110, signal: ok(450), window: 12 },
      { atMs: 120, signal: ok(450), window: 13 },
      { atMs: 130, signal: ok(450), random: 0, window: 6.5, limit: 'latency' }, // 450 - 300 > 100: x0.5
      { atMs: 200, signal: ok(450), random: 0, window: 6.5, limit: 'latency' }, // within one RTT (450 ms) of it
      { atMs: 600, signal: ok(450), random: 0.5, window: 3.9, limit: 'latency' }, // next round trip: x0.6
      // Back near the base: congestion avoidance, (1 - delay/target) / window per answer.
      { atMs: 700, signal: ok(300), window: 3.9 + 1 / 3.9, limit: 'latency' },
    ]);
    expect(s.slowStart).toBe(false);
    expect(queueingDelayMs(s)).toBe(0);
  });

  it('a delay under the target still grows, slower the nearer it is', () => {
    const start = {
      ...initialDrainState(),
      window: 4,
      slowStart: false,
      base: [{ minute: 0, minMs: 300 }],
      recent: [300, 300, 300, 300],
      lastSampleAt: 0,
    };
    let w = 4;
    const rows: Row[] = [];
    // The filter still holds a 300 among the last four: no delay yet, a full 1/window step.
    for (let k = 0; k < 3; k++) rows.push({ atMs: k, signal: ok(350), window: (w += 1 / w) });
    // All four at 350: 50 ms of a 100 ms target, half a step.
    rows.push({ atMs: 3, signal: ok(350), window: (w += 0.5 / w) });
    run(rows, start);
  });

  it('pushback (429/503) and timeouts: multiplicative decrease, below one request a pace, named in status', () => {
    const start = { ...initialDrainState(), window: 20, slowStart: false, recent: [300], base: [{ minute: 0, minMs: 300 }] };
    const s = run(
      [
        { atMs: 1000, signal: { kind: 'pushback' }, random: 0, window: 10, limit: 'pushback' },
        { atMs: 1100, signal: { kind: 'pushback' }, random: 0, window: 10, limit: 'pushback' }, // same burst
        { atMs: 1400, signal: { kind: 'pushback' }, random: 0.999, window: 6.998, limit: 'pushback' }, // x 0.6998
        { atMs: 2000, signal: { kind: 'timeout' }, random: 0, window: 3.499, limit: 'link' },
        { atMs: 3000, signal: { kind: 'timeout' }, random: 0, window: 1.7495 },
        // Below one request: a pace (one request, then a pause), so that a fleet can yield further.
        { atMs: 4000, signal: { kind: 'timeout' }, random: 0, window: 0.87475 },
        { atMs: 5000, signal: { kind: 'pushback' }, random: 0, window: 0.437375 },
      ],
      start,
    );
    expect(drainAllowance(s, TUNING)).toBe(1);
    expect(drainGapMs(s)).toBeCloseTo(300 * (1 / 0.437375 - 1), 6);
    // Back at the base latency: half of itself more per answer while below one, then linear.
    const up = drainStep(s, ok(300), 6000, TUNING, 0);
    expect(up.window).toBeCloseTo(0.437375 * 1.5, 9);
    let floor = s;
    for (let k = 1; k <= 20; k++) floor = drainStep(floor, { kind: 'pushback' }, 5000 + k * 1000, TUNING, 0);
    expect(floor.window).toBe(MIN_WINDOW);
    expect(drainGapMs(floor)).toBeCloseTo(300 * 63, 6);
    expect(drainGapMs({ ...floor, window: 1 })).toBe(0);
    // A minute later the slowdown is history: the window is what it is.
    expect(drainLimit(s, 5000 + 60_000, TUNING)).toBe('growing');
  });

  it('the base is a windowed minimum: a lucky sample is forgotten after baseHistoryMin minutes with answers, not during an outage', () => {
    const clock = new ManualClock();
    let s = initialDrainState();
    s = drainStep(s, ok(200), clock.monotonicMs(), TUNING, 0);
    for (let m = 1; m <= 10; m++) {
      clock.advance(60_000);
      s = drainStep(s, ok(300), clock.monotonicMs(), TUNING, 0);
      expect(baseLatencyMs(s)).toBe(m < 10 ? 200 : 300);
    }
    // Minutes without answers (an outage) do not age it: the last ten minutes with answers count.
    clock.advance(3_600_000);
    s = drainStep(s, ok(900), clock.monotonicMs(), TUNING, 0);
    expect(baseLatencyMs(s)).toBe(300);
    for (let k = 0; k < 4; k++) s = drainStep(s, ok(300), clock.monotonicMs() + 1 + k, TUNING, 0);
    // With the base at 300 again, 350 is within target: no decrease.
    const before = s.window;
    for (let k = 0; k < 4; k++) s = drainStep(s, ok(350), clock.monotonicMs() + k, TUNING, 0);
    expect(s.window).toBeGreaterThan(before);
  });

  it('the ceiling bounds the allowance, and a ceiling of 1 is one request', () => {
    const s = { ...initialDrainState(), window: 50 };
    expect(drainAllowance(s, { ceiling: 8 })).toBe(8);
    expect(drainAllowance(s, { ceiling: 1 })).toBe(1);
    expect(drainAllowance(initialDrainState(), { ceiling: 8 })).toBe(1);
  });
});

describe('the drain meter across an outage', () => {
  it("an outage's probes do not shrink the window again: the backlog resumes at once after it", () => {
    const meter = new DrainMeter(TUNING);
    const down = { kind: 'error', errorClass: 'transient' } as const;
    // The failure that began the outage is one congestion event.
    meter.observe(down, 5, true, 1000, 0, true);
    const after = meter.status(1000, 33, undefined).window;
    expect(after).toBeCloseTo(0.5);
    // Ten probes failing during the outage (the retry backoff paces them): the window stays.
    for (let i = 1; i <= 10; i++) meter.observe(down, 5, true, 1000 + i * 1000, 0, false);
    expect(meter.status(11_000, 33, undefined).window).toBeCloseTo(after);
    // The platform back: one answer of 300 ms, and the next backlog request waits less than a second.
    meter.observe({ kind: 'response', status: 200 }, 300, true, 12_000, 0, false);
    expect(meter.gapMs()).toBeLessThan(1000);
  });
});

describe('the base across a handover', () => {
  /** One vehicle's answers: `latency(window)` per answer, the window's requests each round trip. */
  function run(
    s: DrainState,
    fromMs: number,
    toMs: number,
    latency: (w: number) => number,
  ): { s: DrainState; t: number; minWindow: number } {
    let t = fromMs;
    let minWindow = Infinity;
    while (t < toMs) {
      const l = latency(s.window);
      // Below one request the window is a pace: the next answer comes after the gap.
      t += s.window >= 1 ? l / Math.floor(s.window) : l + drainGapMs(s);
      s = drainStep(s, ok(l), t, TUNING, 0.5);
      minWindow = Math.min(minWindow, s.window);
    }
    return { s, t, minWindow };
  }

  it('a round trip that grows for good (300 -> 450 ms) is learnt in seconds, not after ten minutes', () => {
    const before = run(initialDrainState(), 0, 120_000, () => 300);
    expect(before.s.window).toBe(32);
    // The handover: the delay does not fall as the window is cut, so it is the path's.
    let s = before.s;
    let t = before.t;
    let backAt: number | undefined;
    while (t < before.t + 600_000 && backAt === undefined) {
      const r = run(s, t, t + 1000, () => 450);
      s = r.s;
      t = r.t;
      if (s.window >= 16) backAt = t;
    }
    expect(baseLatencyMs(s)).toBe(450);
    expect(backAt! - before.t).toBeLessThan(30_000);
  });

  it('a queue of its own is yielded to, never taken for the base', () => {
    // Each request in flight adds 10 ms: 32 in flight is 620 ms, 10 is 400 (the target's edge).
    const r = run(initialDrainState(), 0, 300_000, (w) => 300 + 10 * Math.floor(w));
    expect(r.s.lastRebaseAt).toBe(-Infinity);
    expect(baseLatencyMs(r.s)).toBe(310);
    expect(r.s.window).toBeLessThanOrEqual(12);
  });
});
