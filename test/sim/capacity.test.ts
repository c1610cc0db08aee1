import { Agent } from 'undici';
import { describe, expect, it, onTestFinished } from 'vitest';
import { PlatformHttp } from '../../src/platform/transport/http.js';
import { CapacityModel, LinkRelay, PlatformSimulator } from '../../src/sim/index.js';
import { fixAt } from '../store/outbox/helpers.js';
import { closeRig, until, uploadRig, type UploadRig } from '../upload/harness.js';

describe('capacity model: a queue served at a rate, turned away past its bound', () => {
  it('as a table: waits grow with the queue; past the bound 429 or 503, Retry-After as configured', () => {
    const m = new CapacityModel({ ratePerS: 10, queueBound: 2 });
    expect([0, 0, 0, 0].map((t) => m.admit(t))).toEqual([
      { kind: 'serve', waitMs: 100 },
      { kind: 'serve', waitMs: 200 },
      { kind: 'serve', waitMs: 300 },
      { kind: 'reject', status: 429 },
    ]);
    // 250 ms later the queue has moved on: one is in service, one waits.
    expect(m.admit(250)).toEqual({ kind: 'serve', waitMs: 150 });
    expect(m.counters).toEqual({ served: 4, rejected: 1, maxWaitMs: 300 });
    const busy = new CapacityModel({ ratePerS: 1, queueBound: 0, rejectStatus: 503, retryAfterS: 7 });
    expect(busy.admit(0)).toEqual({ kind: 'serve', waitMs: 1000 });
    expect(busy.admit(10)).toEqual({ kind: 'reject', status: 503, retryAfterS: 7 });
    const slowOnly = new CapacityModel({ ratePerS: 100 });
    for (let i = 0; i < 1000; i++) expect(slowOnly.admit(0).kind).toBe('serve');
    expect(slowOnly.counters.maxWaitMs).toBeCloseTo(10_000, 6);
  });
});

let rig: UploadRig | undefined;
describe('the uploader against a platform of limited capacity', () => {
  for (const [name, spec] of [
    ['429 without Retry-After past a short queue', { ratePerS: 40, queueBound: 4 }],
    ['503 with Retry-After past a short queue', { ratePerS: 40, queueBound: 4, rejectStatus: 503 as const, retryAfterS: 1 }],
    ['a platform that only slows down', { ratePerS: 40 }],
  ] as const) {
    it(`${name}: every fix delivered once, and status names the slowdown`, async () => {
      rig = await uploadRig({ concurrency: 32, minBackoffMs: 100, maxBackoffMs: 1000 });
      onTestFinished(() => closeRig(rig));
      const r = rig;
      r.platform.sim.setCapacity('events', spec);
      for (let i = 0; i < 300; i++) r.outbox.record(fixAt(i));
      r.outbox.flush();
      r.registration.register();
      await until(r, () => r.outbox.pendingCount() === 0 && r.uploader.status().inFlight === 0);
      const sim = r.platform.sim;
      expect(sim.events.size).toBe(300);
      expect(sim.stats.duplicates).toBe(0);
      expect(sim.stats.capacity?.events?.served).toBeGreaterThanOrEqual(300);
      // The queue grew (latency) or the platform turned requests away (pushback): the drain yielded.
      expect(['latency', 'pushback']).toContain(r.uploader.status().drain.limit);
    });
  }
});

describe('link relay: a cellular round trip on loopback', () => {
  it('adds its round-trip time to each exchange and passes every byte', async () => {
    const sim = new PlatformSimulator();
    const urls = await sim.start();
    const relay = new LinkRelay({ rttMs: 300 });
    const port = await relay.start({ host: '127.0.0.1', port: urls.port });
    const dispatcher = new Agent();
    onTestFinished(async () => {
      await dispatcher.close();
      await relay.stop();
      await sim.stop();
    });
    const http = new PlatformHttp({ dispatcher, requestTimeoutMs: 5000, maxResponseBytes: 1 << 20 });
    const url = `http://127.0.0.1:${port}/_sim/stats`;
    await http.send({ method: 'GET', url, what: 'stats' }); // connect (one more round trip)
    const t0 = performance.now();
    const res = await http.send({ method: 'GET', url, what: 'stats' });
    expect(res.status).toBe(200);
    // Half the round trip each way: never sooner (timers do not fire early).
    expect(performance.now() - t0).toBeGreaterThanOrEqual(295);
    expect(relay.bytes.up).toBeGreaterThan(0);
    expect(relay.bytes.down).toBeGreaterThan(relay.bytes.up);
  });
});
