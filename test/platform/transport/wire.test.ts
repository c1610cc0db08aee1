import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createPlatformDispatcher } from '../../../src/platform/transport/dispatcher.js';
import { PlatformHttp } from '../../../src/platform/transport/http.js';
import { WireCounter } from '../../../src/platform/transport/wire-counter.js';
import { PlatformSimulator } from '../../../src/sim/index.js';
import { makeThrowawayCa } from '../../../src/sim/throwaway-ca.js';
import { tempDir } from '../../helpers/tmp.js';

class FakeSocket extends EventEmitter {
  bytesWritten = 0;
  bytesRead = 0;
}

async function until(cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > timeoutMs) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('WireCounter: bytes at the socket, today and this month', () => {
  it('adds bytes when a socket closes and when read while open, into UTC day and month buckets', () => {
    let now = Date.UTC(2026, 10, 30, 23, 59, 0);
    const wire = new WireCounter({ wallMs: () => now });
    const s = new FakeSocket();
    wire.track(s as unknown as Socket);
    s.bytesWritten = 1000;
    s.bytesRead = 3000;
    expect(wire.snapshot()).toMatchObject({ day: '2026-11-30', today: { sent: 1000, received: 3000 }, open: 1, connections: 1 });
    // Past midnight into December: a new day and a new month; only the new bytes land there.
    now = Date.UTC(2026, 11, 1, 0, 0, 30);
    s.bytesWritten = 1500;
    s.bytesRead = 3100;
    s.emit('close');
    const snap = wire.snapshot();
    expect(snap).toMatchObject({ day: '2026-12-01', today: { sent: 500, received: 100 }, month: '2026-12', open: 0 });
    expect(snap.thisMonth).toEqual({ sent: 500, received: 100 });
    expect(snap.total).toEqual({ sent: 1500, received: 3100 });
  });

  it('continues the persisted figures of the same day and month, drops older ones', () => {
    const now = Date.UTC(2026, 10, 23, 12);
    const wire = new WireCounter({ wallMs: () => now });
    wire.load({
      day: '2026-11-22',
      today: { sent: 9, received: 9 },
      month: '2026-11',
      thisMonth: { sent: 100, received: 200 },
      protocol: 'h2',
    });
    expect(wire.usage()).toEqual({
      day: '2026-11-23',
      today: { sent: 0, received: 0 },
      month: '2026-11',
      thisMonth: { sent: 100, received: 200 },
      protocol: 'h2',
    });
    const junk = new WireCounter({ wallMs: () => now });
    junk.load({ day: '2026-11-23', today: { sent: -5, received: 'x' }, month: '2026-11', thisMonth: null } as never);
    expect(junk.usage().today).toEqual({ sent: 0, received: 0 });
  });
});

describe('platform dispatcher over TLS: idle close and TLS resumption', () => {
  it('closes an idle h2 connection after idleTimeoutMs; the next request resumes the TLS session', async () => {
    const ca = makeThrowawayCa(tempDir('ta-ca-'));
    const sim = new PlatformSimulator();
    const urls = await sim.start({ tls: { key: ca.key, cert: ca.cert, protocols: 'h2' }, idleTimeoutMs: 60_000 });
    const dispatcher = createPlatformDispatcher({ caFile: ca.caFile, maxConnections: 4, requestTimeoutMs: 5000, idleTimeoutMs: 300 });
    onTestFinished(async () => {
      await dispatcher.close();
      await sim.stop();
    });
    const http = new PlatformHttp({ dispatcher, requestTimeoutMs: 5000, maxResponseBytes: 1 << 20 });
    const get = () => http.send({ method: 'GET', url: `${urls.adminUrl}/stats`, what: 'stats' });
    // Two at once while the first connection is still being set up: still one connection.
    await Promise.all([get(), get()]);
    expect(dispatcher.wire.snapshot()).toMatchObject({ protocol: 'h2', connections: 1, fullHandshakes: 1, open: 1 });
    await until(() => dispatcher.wire.snapshot().open === 0);
    const full = dispatcher.wire.snapshot().total;
    await get();
    const after = dispatcher.wire.snapshot();
    expect(after).toMatchObject({ connections: 2, fullHandshakes: 1, resumedHandshakes: 1 });
    // The resumed handshake carries no certificate: the second connection cost less than the first.
    expect(after.total.received - full.received).toBeLessThan(full.received);
    expect(sim.stats.connections).toEqual({ opened: 2, h2: 2, http1: 0 });
  });

  it('a busy h2 connection is never closed as idle: idle means no request in flight for idleTimeoutMs', async () => {
    const ca = makeThrowawayCa(tempDir('ta-ca-'));
    const sim = new PlatformSimulator();
    const urls = await sim.start({ tls: { key: ca.key, cert: ca.cert, protocols: 'h2' }, idleTimeoutMs: 60_000 });
    // Each answer takes longer than the idle timeout, and the next request starts as the previous
    // ends: the connection carries traffic all along, but no byte moves for 400 ms at a time.
    sim.setFaults('events', { latencyMs: 400 });
    const dispatcher = createPlatformDispatcher({ caFile: ca.caFile, maxConnections: 4, requestTimeoutMs: 5000, idleTimeoutMs: 200 });
    onTestFinished(async () => {
      await dispatcher.close();
      await sim.stop();
    });
    const http = new PlatformHttp({ dispatcher, requestTimeoutMs: 5000, maxResponseBytes: 1 << 20 });
    const put = () =>
      http.send({ method: 'PUT', url: `${urls.planningUrl}/otm/api/v5/events`, body: '{}', idempotent: true, what: 'event' });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await put()).status);
    // Unauthenticated: 401 each time, but each one answered (none failed on a closed connection).
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
    expect(sim.stats.connections.opened).toBe(1);
    expect(dispatcher.wire.snapshot()).toMatchObject({ connections: 1, open: 1 });
    // Then nothing in flight: it closes.
    await until(() => dispatcher.wire.snapshot().open === 0);
    expect(dispatcher.inFlight.count()).toBe(0);
  });

  it('http2: false offers HTTP/1.1 only, even to a server that speaks h2', async () => {
    const ca = makeThrowawayCa(tempDir('ta-ca-'));
    const sim = new PlatformSimulator();
    const urls = await sim.start({ tls: { key: ca.key, cert: ca.cert, protocols: 'h2' } });
    const dispatcher = createPlatformDispatcher({ caFile: ca.caFile, maxConnections: 2, requestTimeoutMs: 5000, http2: false });
    onTestFinished(async () => {
      await dispatcher.close();
      await sim.stop();
    });
    const http = new PlatformHttp({ dispatcher, requestTimeoutMs: 5000, maxResponseBytes: 1 << 20 });
    expect((await http.send({ method: 'GET', url: `${urls.adminUrl}/stats`, what: 'stats' })).status).toBe(200);
    expect(dispatcher.wire.snapshot().protocol).toBe('http/1.1');
    expect(sim.stats.connections).toEqual({ opened: 1, h2: 0, http1: 1 });
  });
});
