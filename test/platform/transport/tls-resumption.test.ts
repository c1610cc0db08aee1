import { randomBytes } from 'node:crypto';
import { describe, expect, it, onTestFinished } from 'vitest';
import { TlsSessionCache } from '../../../src/platform/transport/connector.js';
import { createPlatformDispatcher, type PlatformDispatcher } from '../../../src/platform/transport/dispatcher.js';
import { PlatformHttp } from '../../../src/platform/transport/http.js';
import { PlatformSimulator } from '../../../src/sim/index.js';
import type { SimTlsOptions } from '../../../src/sim/server.js';
import { makePublicLikeChain, makeThrowawayCa, type ThrowawayCa } from '../../../src/sim/throwaway-ca.js';
import { freePort } from '../../helpers/ports.js';
import { tempDir } from '../../helpers/tmp.js';
import { waitFor } from '../../helpers/wait.js';

/**
 * TLS resumption on every reconnect: the connector offers the right ticket, keeps it
 * when a connection merely ends, and drops it when the server did not take it.
 */
const ticket = (n: number) => Buffer.from(`ticket-${n}`);

describe('TlsSessionCache: which ticket is offered', () => {
  it('offers the newest ticket not yet offered, then the newest again; a refused ticket is gone', () => {
    const c = new TlsSessionCache();
    expect(c.take('a:443')).toBeUndefined();
    c.add('a:443', ticket(1));
    c.add('a:443', ticket(2)); // a TLS 1.3 server sends two after a full handshake
    expect(c.take('a:443')).toEqual(ticket(2));
    // A server with single-use tickets would refuse ticket 2 now: the other one is still fresh.
    expect(c.take('a:443')).toEqual(ticket(1));
    // Every ticket offered once: a server with stateless tickets takes the newest again.
    expect(c.take('a:443')).toEqual(ticket(2));
    c.refused('a:443', c.take('a:443')!);
    expect(c.take('a:443')).toEqual(ticket(1));
    expect(c.count('a:443')).toBe(1);
    expect(c.take('b:443')).toBeUndefined();
  });

  it('keeps at most four tickets per origin, the newest', () => {
    const c = new TlsSessionCache();
    for (let i = 1; i <= 6; i++) c.add('a:443', ticket(i));
    expect(c.count('a:443')).toBe(4);
    expect(c.entries().map((e) => e.session.toString())).toEqual(['ticket-6', 'ticket-5', 'ticket-4', 'ticket-3']);
  });
});

async function simulator(ca: ThrowawayCa, protocols: SimTlsOptions['protocols'], extra: Partial<SimTlsOptions> = {}, port?: number) {
  const sim = new PlatformSimulator();
  const urls = await sim.start({
    tls: { key: ca.key, cert: ca.cert, protocols, ...extra },
    idleTimeoutMs: 60_000,
    ...(port ? { port } : {}),
  });
  onTestFinished(() => sim.stop());
  return { sim, urls };
}

function client(ca: ThrowawayCa): { dispatcher: PlatformDispatcher; get: (url: string) => Promise<unknown> } {
  // Short idle timeout: every request below finds its connection closed and reconnects.
  const dispatcher = createPlatformDispatcher({ caFile: ca.caFile, maxConnections: 1, requestTimeoutMs: 10_000, idleTimeoutMs: 100 });
  onTestFinished(() => dispatcher.close());
  const http = new PlatformHttp({ dispatcher, requestTimeoutMs: 10_000, maxResponseBytes: 1 << 20 });
  return { dispatcher, get: (url) => http.send({ method: 'GET', url, what: 'stats' }) };
}

async function reconnect(d: PlatformDispatcher, get: () => Promise<unknown>): Promise<void> {
  await get();
  await waitFor('the idle connection to close', () => d.wire.snapshot().open === 0);
}

describe('platform dispatcher: every reconnect resumes the TLS session', () => {
  for (const protocols of ['h2', 'http/1.1'] as const) {
    it(`${protocols}: six connections, one full handshake and five resumed`, async () => {
      const ca = makeThrowawayCa(tempDir('ta-ca-'));
      const { sim, urls } = await simulator(ca, protocols);
      const { dispatcher, get } = client(ca);
      for (let i = 0; i < 6; i++) await reconnect(dispatcher, () => get(`${urls.adminUrl}/stats`));
      expect(sim.stats.connections.opened).toBe(6);
      const w = dispatcher.wire.snapshot();
      expect(w).toMatchObject({ connections: 6, fullHandshakes: 1, resumedHandshakes: 5 });
      // A resumed handshake carries no certificate chain.
      expect(w.handshakeBytes.resumed / 5).toBeLessThan(w.handshakeBytes.full);
    });
  }

  it('a connection the server cuts after its handshake keeps the ticket: the next one resumes', async () => {
    const ca = makeThrowawayCa(tempDir('ta-ca-'));
    const { sim, urls } = await simulator(ca, 'h2');
    const { dispatcher, get } = client(ca);
    await reconnect(dispatcher, () => get(`${urls.adminUrl}/stats`));
    for (let i = 0; i < 3; i++) {
      sim.setFaults('devices', { dropRate: 1, limit: 1 });
      await expect(get(urls.deviceUrl)).rejects.toThrow();
      await waitFor('the cut connection to close', () => dispatcher.wire.snapshot().open === 0);
    }
    await reconnect(dispatcher, () => get(`${urls.adminUrl}/stats`));
    expect(dispatcher.wire.snapshot()).toMatchObject({ connections: 5, fullHandshakes: 1, resumedHandshakes: 4 });
  });

  it('a restarted server with a new ticket key refuses the ticket: one full handshake, then resumptions again', async () => {
    const ca = makeThrowawayCa(tempDir('ta-ca-'));
    // Restarted on its port: one outside the ephemeral range, which nothing else is handed meanwhile.
    const first = await simulator(ca, 'h2', {}, await freePort());
    const { dispatcher, get } = client(ca);
    const stats = () => get(`${first.urls.adminUrl}/stats`);
    await reconnect(dispatcher, stats);
    await reconnect(dispatcher, stats);
    await first.sim.stop();
    await simulator(ca, 'h2', {}, first.urls.port);
    await reconnect(dispatcher, stats);
    await reconnect(dispatcher, stats);
    expect(dispatcher.wire.snapshot()).toMatchObject({ connections: 4, fullHandshakes: 2, resumedHandshakes: 2 });
  });

  it('a restarted server that keeps its ticket key (ticketKeys) resumes the tickets of the previous one', async () => {
    const ca = makeThrowawayCa(tempDir('ta-ca-'));
    const ticketKeys = randomBytes(48);
    const first = await simulator(ca, 'http/1.1', { ticketKeys }, await freePort());
    const { dispatcher, get } = client(ca);
    const stats = () => get(`${first.urls.adminUrl}/stats`);
    await reconnect(dispatcher, stats);
    await first.sim.stop();
    await simulator(ca, 'http/1.1', { ticketKeys }, first.urls.port);
    await reconnect(dispatcher, stats);
    expect(dispatcher.wire.snapshot()).toMatchObject({ connections: 2, fullHandshakes: 1, resumedHandshakes: 1 });
  });
});

describe("bench:wire's real terms: a public CA's chain, and a server that resumes nothing", () => {
  it('every reconnect a full handshake carrying leaf + two intermediates; with resumption on, the same chain resumes', async () => {
    const ca = makePublicLikeChain(tempDir('ta-public-ca-'));
    expect(ca.cert.match(/BEGIN CERTIFICATE/g)).toHaveLength(3);
    const none = await simulator(ca, 'h2', { resumption: false });
    const a = client(ca);
    for (let i = 0; i < 3; i++) await reconnect(a.dispatcher, () => a.get(`${none.urls.adminUrl}/stats`));
    const w = a.dispatcher.wire.snapshot();
    expect(w).toMatchObject({ connections: 3, fullHandshakes: 3, resumedHandshakes: 0 });
    // Three RSA-2048 certificates of about 1.2-1.5 KB each cross in every handshake.
    expect(w.handshakeBytes.full / 3).toBeGreaterThan(4000);
    const resuming = await simulator(ca, 'h2');
    const b = client(ca);
    for (let i = 0; i < 3; i++) await reconnect(b.dispatcher, () => b.get(`${resuming.urls.adminUrl}/stats`));
    expect(b.dispatcher.wire.snapshot()).toMatchObject({ connections: 3, fullHandshakes: 1, resumedHandshakes: 2 });
  });
});
