import { afterEach, describe, expect, it } from 'vitest';
import type { PlatformDispatcher } from '../../src/platform/transport/dispatcher.js';
import { fixAt } from '../store/outbox/helpers.js';
import { closeRig, until, uploadRig, type UploadRig } from './harness.js';

/**
 * The uploader over TLS against the simulator's TLS modes: HTTP/2 where offered, one
 * multiplexed connection, HTTP/1.1 where not, and the faults that are specific to a multiplexed
 * connection: a 401 on one stream, the connection cut with several streams in flight, GOAWAY.
 */
let rig: UploadRig | undefined;
afterEach(async () => {
  await closeRig(rig);
  rig = undefined;
});

async function deliver(r: UploadRig, n: number): Promise<void> {
  for (let i = 0; i < n; i++) r.outbox.record(fixAt(i));
  r.outbox.flush();
  r.registration.register();
  await until(r, () => r.outbox.pendingCount() === 0 && r.uploader.status().inFlight === 0);
}

const wireOf = (r: UploadRig) => (r.platform.dispatcher as PlatformDispatcher).wire.snapshot();

/** Resolves once `n` event requests have reached the simulator (they then wait in its latency). */
function eventsArrived(r: UploadRig, n: number): Promise<void> {
  return until(r, () => r.platform.sim.stats.requests.events >= n);
}

describe('uploader over TLS (simulator TLS modes, throwaway CA via platform.caFile)', () => {
  it('h2 offered: everything on one multiplexed connection, token and events alike', async () => {
    rig = await uploadRig({ concurrency: 4 }, { tls: 'h2' });
    await deliver(rig, 40);
    const sim = rig.platform.sim;
    expect(sim.events.size).toBe(40);
    expect(sim.stats.duplicates).toBe(0);
    // The password grant and 40 events, 4 in flight at a time: one connection, and it is h2.
    expect(sim.stats.connections).toEqual({ opened: 1, h2: 1, http1: 0 });
    const wire = wireOf(rig);
    expect(wire).toMatchObject({ protocol: 'h2', connections: 1, fullHandshakes: 1, resumedHandshakes: 0 });
    // Counted at the socket: the handshake alone is over a kilobyte both ways.
    expect(wire.total.sent).toBeGreaterThan(40 * 200);
    expect(wire.total.received).toBeGreaterThan(1000);
  });

  it('HTTP/1.1 only: falls back, several keep-alive connections, later ones resume the TLS session', async () => {
    rig = await uploadRig({ concurrency: 4 }, { tls: 'http/1.1' });
    await deliver(rig, 40);
    const sim = rig.platform.sim;
    expect(sim.events.size).toBe(40);
    expect(sim.stats.duplicates).toBe(0);
    expect(sim.stats.connections.h2).toBe(0);
    expect(sim.stats.connections.http1).toBeGreaterThanOrEqual(2);
    const wire = wireOf(rig);
    expect(wire.protocol).toBe('http/1.1');
    expect(wire.fullHandshakes).toBe(1);
    expect(wire.resumedHandshakes).toBe(wire.connections - 1);
  });

  it('h2: event requests run side by side on one connection (each event is idempotent: its own id)', async () => {
    rig = await uploadRig({ concurrency: 4 }, { tls: 'h2' });
    const sim = rig.platform.sim;
    const r = rig;
    // The simulator counts a request as it arrives and answers it 1.5 s later: multiplexed, several
    // arrive while none of them is answered; one at a time, each arrives after the one before it
    // was answered (at most one unanswered on arrival).
    sim.setFaults('events', { latencyMs: 1500 });
    let overlap = 0;
    sim.onRequest((route) => {
      if (route !== 'events') return;
      const s = r.uploader.status();
      overlap = Math.max(overlap, sim.stats.requests.events - (s.live.sent + s.backlog.sent));
    });
    await deliver(r, 12);
    expect(overlap).toBeGreaterThanOrEqual(3);
    expect(sim.events.size).toBe(12);
    expect(sim.stats.duplicates).toBe(0);
    expect(sim.stats.connections).toEqual({ opened: 1, h2: 1, http1: 0 });
    const dispatcher = r.platform.dispatcher as PlatformDispatcher;
    expect(dispatcher.inFlight.peak(new URL(r.platform.urls.planningUrl).origin)).toBeGreaterThanOrEqual(3);
    expect(dispatcher.inFlight.count()).toBe(0);
  });

  it('h2: a 401 on one stream refreshes the token while the other streams go on; nothing lost', async () => {
    rig = await uploadRig({ concurrency: 4 }, { tls: 'h2' });
    rig.platform.sim.setFaults('events', { unauthorizedRate: 1, limit: 1 });
    await deliver(rig, 30);
    const sim = rig.platform.sim;
    expect(sim.stats.faults.events).toBe(1);
    expect(sim.events.size).toBe(30);
    expect(sim.stats.refreshes).toBe(1);
    expect(sim.stats.passwordGrants).toBe(1);
    expect(sim.stats.connections.opened).toBe(1);
  });

  it('h2: the connection cut with several streams in flight: reconnects, every event delivered', async () => {
    rig = await uploadRig({ concurrency: 4, minBackoffMs: 50, maxBackoffMs: 200 }, { tls: 'h2' });
    const sim = rig.platform.sim;
    sim.setFaults('events', { latencyMs: 300 });
    for (let i = 0; i < 20; i++) rig.outbox.record(fixAt(i));
    rig.outbox.flush();
    rig.registration.register();
    await eventsArrived(rig, 4);
    expect(sim.dropConnections()).toBe(1);
    sim.setFaults('events', undefined);
    await until(rig, () => rig!.outbox.pendingCount() === 0 && rig!.uploader.status().inFlight === 0);
    expect(sim.events.size).toBe(20);
    expect(rig.outbox.status().deadLetters).toBe(0);
    expect(sim.stats.connections.opened).toBe(2);
    // The four cut answers were processed by the simulator: sent again under the same ids.
    expect(sim.stats.duplicates).toBeLessThanOrEqual(4);
  });

  it('h2: GOAWAY with streams in flight: a new connection, every event delivered', async () => {
    rig = await uploadRig({ concurrency: 4, minBackoffMs: 50, maxBackoffMs: 200 }, { tls: 'h2' });
    const sim = rig.platform.sim;
    sim.setFaults('events', { latencyMs: 300 });
    for (let i = 0; i < 20; i++) rig.outbox.record(fixAt(i));
    rig.outbox.flush();
    rig.registration.register();
    await eventsArrived(rig, 4);
    expect(sim.goAway()).toBe(1);
    sim.setFaults('events', undefined);
    await until(rig, () => rig!.outbox.pendingCount() === 0 && rig!.uploader.status().inFlight === 0);
    expect(sim.events.size).toBe(20);
    expect(rig.outbox.status().deadLetters).toBe(0);
    expect(sim.stats.connections.opened).toBeGreaterThanOrEqual(2);
    expect(sim.stats.connections.http1).toBe(0);
  });
});
