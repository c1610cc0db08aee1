import { afterEach, describe, expect, it } from 'vitest';
import { SYSTEMIC_RUN } from '../../src/upload/rejection-rule.js';
import { fixAt } from '../store/outbox/helpers.js';
import { closeRig, until, uploadRig, type UploadRig } from './harness.js';

/**
 * A systemic refusal against the simulator: a platform that refuses everything keeps the backlog intact;
 * only an event the platform refuses while accepting others is dead-lettered.
 */
let rig: UploadRig | undefined;
afterEach(async () => {
  await closeRig(rig);
  rig = undefined;
});

function record(r: UploadRig, n: number, bad: (i: number) => boolean = () => false): void {
  // Year 10000: a date the simulator's OTM5 validation refuses with an error object naming creationDate.
  for (let i = 0; i < n; i++) r.outbox.record(bad(i) ? fixAt(i, { time: Date.UTC(10000, 0, 1) + i * 1000 }) : fixAt(i));
  r.outbox.flush();
}

const deadLetters = (r: UploadRig) => (r.db.prepare('SELECT count(*) AS n FROM dead_letter').get() as { n: number }).n;

describe('a refusal of everything is not a bad event', () => {
  // Every status of the events column is tested as a table (test/retry, test/upload/retry-decision); three here end to end.
  it.each([405, 407, 410])(
    'HTTP %i to every event: backlog intact, FAILING with the status and what to check, one probe every half to whole maxBackoffMs, then all delivered once',
    async (status) => {
      rig = await uploadRig({ concurrency: 4, minBackoffMs: 50, maxBackoffMs: 300 });
      rig.platform.sim.setFaults('events', { status });
      const arrivals: number[] = [];
      rig.platform.sim.onRequest((route) => {
        if (route === 'events') arrivals.push(performance.now());
      });
      record(rig, 400);
      rig.registration.register();
      // The first burst (at most upload.concurrency), then three probes, however slow the machine is.
      await until(rig, () => arrivals.length >= 4 + 3);
      expect(rig.uploader.status().fault).toBeDefined();
      // After the burst, one probe every half to whole maxBackoffMs (300 ms, jittered: 150 to 300), never faster.
      const gaps = arrivals.slice(4, 7).map((at, k) => at - arrivals[3 + k]!);
      for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(150 - 20);
      rig.outbox.flush();
      expect(rig.outbox.pendingCount()).toBe(400);
      expect(deadLetters(rig)).toBe(0);
      const s = rig.uploader.status();
      expect(s.fault).toMatchObject({ kind: 'config', status });
      expect(s.fault!.hint).toMatch(/platform\.eventsPath/);
      expect(s.fault!.hint).toMatch(/proxy/);
      expect(s.fault!.hint).toMatch(/event shape/);
      expect(s.lastError).toMatchObject({ class: 'config', status });

      rig.platform.sim.setFaults('events', undefined); // the path is fixed
      await until(rig, () => rig!.outbox.pendingCount() === 0 && rig!.uploader.status().inFlight === 0);
      expect(rig.platform.sim.events.size).toBe(400);
      expect(rig.platform.sim.stats.duplicates).toBe(0);
      expect(rig.uploader.status().fault).toBeUndefined();
      expect(rig.uploader.status().consecutiveFailures).toBe(0);
    },
  );

  it('a 400 naming a field for every event (another event shape expected): held, FAILING, nothing dead-lettered, resumes', async () => {
    rig = await uploadRig({ concurrency: 4, minBackoffMs: 50, maxBackoffMs: 300 });
    rig.platform.sim.setFaults('events', { status: 400 });
    record(rig, 300);
    rig.registration.register();
    await until(rig, () => rig!.uploader.status().fault !== undefined);
    const before = rig.platform.sim.stats.requests.events;
    await until(rig, () => rig!.platform.sim.stats.requests.events >= before + 2);
    rig.outbox.flush();
    expect(rig.outbox.pendingCount()).toBe(300);
    expect(deadLetters(rig)).toBe(0);
    expect(rig.uploader.status().fault).toMatchObject({ kind: 'refuses-everything', status: 400 });
    expect(rig.uploader.status().held).toBeGreaterThanOrEqual(SYSTEMIC_RUN);

    rig.platform.sim.setFaults('events', undefined);
    await until(rig, () => rig!.outbox.pendingCount() === 0 && rig!.uploader.status().inFlight === 0);
    rig.outbox.flush();
    expect(rig.platform.sim.events.size).toBe(300);
    expect(rig.platform.sim.stats.duplicates).toBe(0);
    expect(deadLetters(rig)).toBe(0);
    expect(rig.uploader.status()).toMatchObject({ held: 0, deadLettered: 0 });
    expect(rig.uploader.status().fault).toBeUndefined();
  });

  it('the platform refuses one event with an OTM5 400 while accepting the others: only that event is dead-lettered', async () => {
    rig = await uploadRig({ concurrency: 4, minBackoffMs: 50, maxBackoffMs: 300 });
    rig.platform.sim.setFaults('events', { rejectEvents: 1 });
    record(rig, 200);
    rig.registration.register();
    await until(rig, () => rig!.outbox.pendingCount() === 0 && rig!.uploader.status().inFlight === 0);
    rig.outbox.flush();
    expect(rig.platform.sim.events.size).toBe(199);
    expect(deadLetters(rig)).toBe(1);
    const dead = rig.db.prepare('SELECT status, error FROM dead_letter').get() as { status: number; error: string };
    expect(dead.status).toBe(400);
    expect(dead.error).toContain('geoReference.lat');
    expect(rig.outbox.status()).toMatchObject({ deadLetters: 1, lastDeadLetter: { status: 400 } });
    expect(rig.uploader.status().fault).toBeUndefined();
  });

  it(`${SYSTEMIC_RUN + 3} bad events in a row among good ones: a systemic run at first, then each judged on its own and dead-lettered`, async () => {
    // oldest-first: the bad run reaches the platform together, before any good event after it.
    rig = await uploadRig({ concurrency: 4, minBackoffMs: 50, maxBackoffMs: 200, order: 'oldest-first' });
    const bad = (i: number) => i >= 20 && i < 20 + SYSTEMIC_RUN + 3;
    record(rig, 100, bad);
    rig.registration.register();
    await until(rig, () => rig!.outbox.pendingCount() === 0 && rig!.uploader.status().inFlight === 0);
    rig.outbox.flush();
    expect(rig.platform.sim.events.size).toBe(100 - (SYSTEMIC_RUN + 3));
    expect(deadLetters(rig)).toBe(SYSTEMIC_RUN + 3);
    expect(rig.platform.sim.stats.duplicates).toBe(0);
    expect(rig.uploader.status()).toMatchObject({ held: 0, deadLettered: SYSTEMIC_RUN + 3 });
  });

  it('a refusal that names nothing (HTML from a proxy) is held, never dead-lettered', async () => {
    rig = await uploadRig({ concurrency: 2, minBackoffMs: 50, maxBackoffMs: 200 });
    rig.platform.sim.setFaults('events', { status: 413, limit: 1 });
    record(rig, 30);
    rig.registration.register();
    await until(rig, () => rig!.outbox.pendingCount() === 0 && rig!.uploader.status().inFlight === 0);
    rig.outbox.flush();
    expect(rig.platform.sim.events.size).toBe(30);
    expect(deadLetters(rig)).toBe(0);
  });
});
