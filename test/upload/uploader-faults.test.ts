import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/system/clock.js';
import { fixAt } from '../store/outbox/helpers.js';
import { closeRig, untilWithBackoffs, uploadRig, type UploadRig } from './harness.js';

let rig: UploadRig | undefined;
afterEach(async () => {
  await closeRig(rig);
  rig = undefined;
});

/**
 * The uploader runs on a manual clock: its backoffs are waited out by moving the clock
 * (untilWithBackoffs), never in real time, and what a wait lasted is read on that clock.
 */
let clock: ManualClock;
async function rigOnClock(upload: Parameters<typeof uploadRig>[0]): Promise<UploadRig> {
  clock = new ManualClock();
  return uploadRig(upload, { clock });
}

/** Arrival times (ms, on the uploader's manual clock) and statuses of event requests at the simulator. */
function watchEvents(r: UploadRig): { at: number; status: number | 'dropped' }[] {
  const seen: { at: number; status: number | 'dropped' }[] = [];
  r.platform.sim.onRequest((route, status) => {
    if (route === 'events') seen.push({ at: clock.monotonicMs(), status });
  });
  return seen;
}

async function queueAndRegister(r: UploadRig, n: number): Promise<void> {
  for (let i = 0; i < n; i++) r.outbox.record(fixAt(i));
  r.outbox.flush();
  r.registration.register();
  await untilWithBackoffs(r, clock, () => r.outbox.pendingCount() === 0 && r.uploader.status().inFlight === 0);
}

describe('uploader under platform faults (simulator)', () => {
  it('5xx storm: every fix delivered once, each retry waits at least its backoff step', async () => {
    rig = await rigOnClock({ concurrency: 1, minBackoffMs: 100, maxBackoffMs: 2000 });
    const seen = watchEvents(rig);
    rig.platform.sim.setFaults('events', { status503Rate: 1, limit: 3 });
    await queueAndRegister(rig, 50);
    const sim = rig.platform.sim;
    expect(sim.events.size).toBe(50);
    expect(sim.stats.duplicates).toBe(0);
    // No more requests than the backoff allows: 50 deliveries and the 3 refused attempts.
    expect(sim.stats.requests.events).toBe(53);
    // Steps of 100, 200, 400 ms with equal jitter: each wait at least half its step.
    const failedAt = seen.flatMap((s, i) => (s.status === 503 ? [i] : []));
    expect(failedAt).toEqual([0, 1, 2]);
    [50, 100, 200].forEach((min, k) => expect(seen[k + 1]!.at - seen[k]!.at).toBeGreaterThanOrEqual(min - 2));
    expect(rig.uploader.status().lastError).toMatchObject({ class: 'transient', status: 503 });
    expect(rig.uploader.status().consecutiveFailures).toBe(0);
  });

  it('a long 5xx storm costs one request per backoff step, not one per fix', async () => {
    rig = await rigOnClock({ concurrency: 8, minBackoffMs: 100, maxBackoffMs: 400 });
    rig.platform.sim.setFaults('events', { status500Rate: 1 });
    for (let i = 0; i < 200; i++) rig.outbox.record(fixAt(i));
    rig.outbox.flush();
    rig.registration.register();
    const t0 = clock.monotonicMs();
    // Not a sleep: wait for the 8 requests of the start and 6 more, then check how long they took.
    await untilWithBackoffs(rig, clock, () => rig!.platform.sim.stats.requests.events >= 14, 'six retries');
    const during = rig.platform.sim.stats.requests.events;
    const elapsed = clock.monotonicMs() - t0;
    // Steps of at least 50, 100, 200, 200, ... ms: at most 8 in flight at the start + one per step.
    expect(during).toBeLessThanOrEqual(8 + Math.ceil(elapsed / 50));
    expect(elapsed).toBeGreaterThanOrEqual(50 + 100 + 200 + 200 + 200 - 5);
    expect(rig.outbox.pendingCount()).toBe(200);
    rig.platform.sim.setFaults('events', undefined);
    await untilWithBackoffs(rig, clock, () => rig!.outbox.pendingCount() === 0);
    expect(rig.platform.sim.events.size).toBe(200);
  });

  it('429 with Retry-After: the next request waits at least Retry-After', async () => {
    rig = await rigOnClock({ concurrency: 1, minBackoffMs: 100, maxBackoffMs: 5000 });
    const seen = watchEvents(rig);
    rig.platform.sim.setFaults('events', { status429: { rate: 1, retryAfterS: 1 }, limit: 1 });
    await queueAndRegister(rig, 5);
    expect(rig.platform.sim.events.size).toBe(5);
    const i = seen.findIndex((s) => s.status === 429);
    expect(i).toBeGreaterThanOrEqual(0);
    expect(seen[i + 1]!.at - seen[i]!.at).toBeGreaterThanOrEqual(990);
  });

  it('dropped connections: retried, delivered once by id', async () => {
    rig = await rigOnClock({ concurrency: 4, minBackoffMs: 100, maxBackoffMs: 500 });
    rig.platform.sim.setFaults('events', { dropRate: 0.3, limit: 10 });
    await queueAndRegister(rig, 80);
    expect(rig.platform.sim.events.size).toBe(80);
    expect(rig.platform.sim.stats.faults.events).toBe(10);
  });

  it('early 401s: the token manager refreshes and the request is retried once, nothing lost', async () => {
    rig = await rigOnClock({ concurrency: 2 });
    rig.platform.sim.setFaults('events', { unauthorizedRate: 0.5, limit: 4 });
    await queueAndRegister(rig, 40);
    expect(rig.platform.sim.events.size).toBe(40);
    expect(rig.platform.sim.stats.refreshes).toBeGreaterThanOrEqual(1);
    expect(rig.platform.sim.stats.passwordGrants).toBe(1);
  });

  it('a 400 for one event: dead-lettered with the platform answer, never retried, never blocks the rest', async () => {
    rig = await rigOnClock({ concurrency: 2 });
    for (let i = 0; i < 30; i++) {
      // Fix 10 carries a date the platform cannot read (year 10000): the intake answers 400.
      rig.outbox.record(i === 10 ? fixAt(i, { time: Date.UTC(10000, 0, 1) }) : fixAt(i));
    }
    rig.outbox.flush();
    rig.registration.register();
    await untilWithBackoffs(rig, clock, () => rig!.outbox.pendingCount() === 0 && rig!.uploader.status().inFlight === 0);
    const sim = rig.platform.sim;
    expect(sim.events.size).toBe(29);
    expect(sim.stats.invalidEvents).toBe(1);
    rig.outbox.flush();
    const dead = rig.db.prepare('SELECT status, error, fix_time FROM dead_letter').all() as {
      status: number;
      error: string;
      fix_time: number;
    }[];
    expect(dead).toHaveLength(1);
    expect(dead[0]).toMatchObject({ status: 400, fix_time: Date.UTC(10000, 0, 1) });
    expect(dead[0]!.error).toContain('creationDate');
    expect(rig.outbox.status().deadLetters).toBe(1);
    expect(rig.uploader.status()).toMatchObject({ deadLettered: 1, lastError: { status: 400, class: 'rejected' } });
  });
});
