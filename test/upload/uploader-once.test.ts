import { afterEach, describe, expect, it } from 'vitest';
import { fixAt } from '../store/outbox/helpers.js';
import { closeRig, until, uploadRig, type UploadRig } from './harness.js';

/**
 * Every recorded fix is sent exactly once when nothing fails (plain HTTP, the simulator on
 * loopback). A backlog smaller than one page of the backlog lane, queued before registration, is
 * the case where the live lane's newest fix is also in the backlog's first page.
 */
let rig: UploadRig | undefined;
afterEach(async () => {
  await closeRig(rig);
  rig = undefined;
});

/** Requests per event id that arrived more than once. */
function repeated(r: UploadRig): Record<string, number> {
  return Object.fromEntries([...r.platform.sim.events.values()].filter((e) => e.deliveries > 1).map((e) => [e.id, e.deliveries]));
}

describe('uploader: each fix sent once', () => {
  for (const n of [40, 41, 255]) {
    it(`${n} fixes queued before registration, live-first: ${n} requests, no event twice`, async () => {
      rig = await uploadRig({ concurrency: 4, order: 'live-first' });
      for (let i = 0; i < n; i++) rig.outbox.record(fixAt(i));
      rig.outbox.flush();
      const ids = rig.outbox.after(0, 1000).map((e) => e.eventId);
      rig.registration.register();
      await until(rig, () => rig!.outbox.pendingCount() === 0 && rig!.uploader.status().inFlight === 0);
      const sim = rig.platform.sim;
      expect([...sim.events.keys()].sort()).toEqual([...ids].sort());
      expect(repeated(rig)).toEqual({});
      expect(sim.stats.duplicates).toBe(0);
      expect(sim.stats.requests.events).toBe(n);
      expect(rig.uploader.status()).toMatchObject({ live: { sent: 1 }, backlog: { sent: n - 1 }, consecutiveFailures: 0 });
    });
  }
});
