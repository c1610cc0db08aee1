import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/system/clock.js';
import { BacklogPacer } from '../../src/upload/backlog-pacer.js';
import { fixAt } from '../store/outbox/helpers.js';
import { closeRig, until, untilWithBackoffs, uploadRig, type UploadRig } from './harness.js';

/**
 * Recovery: the backlog lane's rate ceiling (upload.backlogMaxRatePerS, over the adaptive window) holds while the live lane sends
 * the newest fix at once, and a 429 with Retry-After holds both lanes. The uploader runs on a manual
 * clock, so what is asserted is which request went when on that clock, never a real-time duration.
 */
let rig: UploadRig | undefined;
afterEach(async () => {
  await closeRig(rig);
  rig = undefined;
});

let clock: ManualClock;
function watchEvents(r: UploadRig): { at: number; status: number | 'dropped' }[] {
  const seen: { at: number; status: number | 'dropped' }[] = [];
  r.platform.sim.onRequest((route, status) => {
    if (route === 'events') seen.push({ at: clock.monotonicMs(), status });
  });
  return seen;
}

describe('backlog rate ceiling (upload.backlogMaxRatePerS)', () => {
  it('the pacer: one second of burst at most, then one send per 1/rate', () => {
    const p = new BacklogPacer(2, 0);
    expect(p.take(0)).toBe(500); // starts empty: a backlog found at start begins at the paced rate
    expect(p.take(500)).toBe(0);
    expect(p.take(500)).toBe(500);
    expect(p.take(10_000)).toBe(0); // long idle: at most `rate` (2) sends at once
    expect(p.take(10_000)).toBe(0);
    expect(p.take(10_000)).toBe(500);
    const unpaced = new BacklogPacer(0, 0);
    for (let i = 0; i < 100; i++) expect(unpaced.take(0)).toBe(0);
  });

  it('drains the backlog at the configured rate, every fix once', async () => {
    clock = new ManualClock();
    rig = await uploadRig({ concurrency: 4, backlogMaxRatePerS: 2 }, { clock });
    const seen = watchEvents(rig);
    for (let i = 0; i < 40; i++) rig.outbox.record(fixAt(i));
    rig.outbox.flush();
    rig.registration.register();
    const r = rig;
    await untilWithBackoffs(r, clock, () => r.outbox.pendingCount() === 0 && r.uploader.status().inFlight === 0);
    expect(r.platform.sim.events.size).toBe(40);
    expect(r.platform.sim.stats.duplicates).toBe(0);
    // 1 live + 39 backlog at 2/s: the last one no sooner than 19 s after the start.
    expect(seen.at(-1)!.at - seen[0]!.at).toBeGreaterThanOrEqual(19_000);
    // No second of the manual clock saw more than the rate plus the live fix.
    const perSecond = new Map<number, number>();
    for (const s of seen) perSecond.set(Math.floor(s.at / 1000), (perSecond.get(Math.floor(s.at / 1000)) ?? 0) + 1);
    expect(Math.max(...perSecond.values())).toBeLessThanOrEqual(3);
    expect(r.uploader.status()).toMatchObject({ live: { sent: 1 }, backlog: { sent: 39 } });
  });

  it('the live lane sends the newest fix at once while the backlog waits for the pacer', async () => {
    clock = new ManualClock();
    rig = await uploadRig({ concurrency: 4, backlogMaxRatePerS: 0.1 }, { clock });
    for (let i = 0; i < 20; i++) rig.outbox.record(fixAt(i));
    rig.outbox.flush();
    rig.registration.register();
    const r = rig;
    await until(r, () => r.uploader.status().live.sent === 1 && r.uploader.status().inFlight === 0, 'the first live fix');
    // The clock does not move: the backlog has no send, yet each new fix goes out on the live lane.
    for (let k = 1; k <= 3; k++) {
      r.outbox.record(fixAt(100 + k));
      r.outbox.flush();
      await until(r, () => r.uploader.status().live.sent === 1 + k && r.uploader.status().inFlight === 0, `live fix ${k}`);
    }
    expect(r.uploader.status().backlog.sent).toBe(0);
    expect(r.platform.sim.events.size).toBe(4);
    expect(r.outbox.pendingCount()).toBe(19);
  });
});

describe('429 with Retry-After holds the whole uploader', () => {
  it('neither lane sends before Retry-After has passed; then everything arrives once', async () => {
    clock = new ManualClock();
    // One request at a time, so that no request is already in flight when the 429 comes back.
    rig = await uploadRig({ concurrency: 1, minBackoffMs: 100, maxBackoffMs: 60_000 }, { clock });
    const seen = watchEvents(rig);
    rig.platform.sim.setFaults('events', { status429: { rate: 1, retryAfterS: 20 }, limit: 1 });
    for (let i = 0; i < 10; i++) rig.outbox.record(fixAt(i));
    rig.outbox.flush();
    rig.registration.register();
    const r = rig;
    await until(r, () => seen.length >= 1 && r.uploader.status().inFlight === 0, 'the 429');
    expect(seen[0]!.status).toBe(429);
    // A new live fix during the wait: the live lane waits too (one platform, one Retry-After).
    clock.advance(5_000);
    r.outbox.record(fixAt(50));
    r.outbox.flush();
    clock.advance(5_000);
    expect(r.uploader.status().state).toBe('backoff');
    await untilWithBackoffs(r, clock, () => r.outbox.pendingCount() === 0 && r.uploader.status().inFlight === 0);
    const after = seen.slice(1);
    expect(after.length).toBe(11);
    // Retry-After 20 s, spread above it: [20 s, 30 s] after the 429, for both lanes.
    for (const s of after) expect(s.at - seen[0]!.at).toBeGreaterThanOrEqual(20_000);
    expect(Math.min(...after.map((s) => s.at)) - seen[0]!.at).toBeLessThanOrEqual(30_000);
    expect(r.platform.sim.events.size).toBe(11);
    expect(r.platform.sim.stats.duplicates).toBe(0);
  });
});
