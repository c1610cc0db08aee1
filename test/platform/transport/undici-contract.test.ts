/**
 * What the HTTP/2 header indexer and the dispatcher rest on in undici, beyond its documented API
 * (docs/decisions/header-indexer.md). Each test fails with a message naming the indexer, so that
 * an undici upgrade that moves one of these says what broke instead of failing somewhere deep.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect as h2Connect, createServer as createH2cServer, type ServerHttp2Session } from 'node:http2';
import net, { type AddressInfo, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { Client as PublicClient, Pool as PublicPool } from 'undici';
import Client from 'undici/lib/dispatcher/client.js';
import Pool from 'undici/lib/dispatcher/pool.js';
import { describe, expect, it, onTestFinished } from 'vitest';
import { H2HeaderIndexer } from '../../../src/platform/transport/h2-header-indexer.js';

const WHY = 'see docs/decisions/header-indexer.md';
const require = createRequire(import.meta.url);

/** An h2c server; `cut`: destroy the connection under a request instead of answering it. */
async function h2cServer(cut = false) {
  const versions: string[] = [];
  const sessions = new Set<ServerHttp2Session>();
  const sockets: Socket[] = [];
  const server = createH2cServer((req, res) => {
    versions.push(req.httpVersion);
    if (cut) {
      // The TCP connection itself, as a NAT or a crashed front cuts it (no GOAWAY).
      for (const s of sockets) s.destroy();
      return;
    }
    res.end('ok');
  });
  server.on('session', (s) => sessions.add(s));
  server.on('connection', (s: Socket) => sockets.push(s));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  onTestFinished(async () => {
    for (const s of sessions) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  });
  return { versions, port: (server.address() as AddressInfo).port };
}

/** A Client whose connector hands undici the indexer over a plain TCP socket, as connector.ts does over TLS. */
function indexedClient(port: number) {
  const indexers: H2HeaderIndexer[] = [];
  const client = new Client(`http://127.0.0.1:${port}`, {
    allowH2: true,
    connect: ((_opts: unknown, callback: (err: Error | null, socket: Socket | null) => void) => {
      const tcp = net.connect(port, '127.0.0.1');
      tcp.once('connect', () => {
        const indexer = new H2HeaderIndexer(tcp as unknown as TLSSocket);
        indexers.push(indexer);
        callback(null, indexer as unknown as Socket);
      });
      tcp.once('error', (e) => callback(e, null));
      return tcp;
    }) as never,
  });
  onTestFinished(() => client.destroy());
  return { client, indexers };
}

describe('undici internals the HTTP/2 header indexer rests on', () => {
  it('undici is pinned to the exact version installed (the indexer was tested with it)', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const installed = (require('undici/package.json') as { version: string }).version;
    expect(
      pkg.dependencies['undici'],
      `h2 header indexer: package.json must pin undici exactly (installed ${installed}); an upgrade runs this file first, ${WHY}`,
    ).toBe(installed);
  });

  it('undici/lib/... can be imported and holds the classes undici exports (dispatcher.ts deep-imports them to save ~8 MB)', () => {
    const manifest = require('undici/package.json') as { exports?: unknown };
    expect(
      manifest.exports,
      `h2 header indexer / dispatcher: undici now has an "exports" map, which may close undici/lib/dispatcher/*.js to dispatcher.ts; ${WHY}`,
    ).toBeUndefined();
    expect(Client, `dispatcher: undici/lib/dispatcher/client.js is no longer undici's Client; ${WHY}`).toBe(PublicClient);
    expect(Pool, `dispatcher: undici/lib/dispatcher/pool.js is no longer undici's Pool; ${WHY}`).toBe(PublicPool);
  });

  it("undici speaks HTTP/2 over a connector's socket whose alpnProtocol is 'h2' (the indexer is such a socket)", async () => {
    const { versions, port } = await h2cServer();
    const { client, indexers } = indexedClient(port);
    const r = await client.request({ method: 'GET', path: '/', headers: { authorization: 'Bearer x' } }).catch((e: unknown) => e);
    const spoke = versions[0] === '2.0' && indexers[0]?.counts.blocks === 1;
    expect(
      spoke,
      `h2 header indexer: undici no longer chooses HTTP/2 from socket.alpnProtocol on a connector's socket (server saw ${JSON.stringify(versions)}, ${String((r as Error).message ?? 'answered')}); the indexer is bypassed or broken, ${WHY}`,
    ).toBe(true);
  });

  it("undici listens for the indexer's 'error' and 'close' (the order _destroy keeps for it); a cut connection fails its request alone", async () => {
    const { port } = await h2cServer(true);
    const { client, indexers } = indexedClient(port);
    const failed = client.request({ method: 'PUT', path: '/', body: 'x' });
    const listenersOf = () => {
      const i = indexers[0];
      return i ? { error: i.listeners('error').map((f) => f.name), close: i.listeners('close').map((f) => f.name) } : undefined;
    };
    let seen: ReturnType<typeof listenersOf>;
    client.once('connect', () => (seen = listenersOf()));
    await expect(failed).rejects.toThrow();
    expect(
      seen,
      `h2 header indexer: undici's socket listeners moved (${JSON.stringify(seen)}); H2HeaderIndexer._destroy emits 'error' a turn before 'close' for onHttp2SocketError and onHttp2SocketClose, ${WHY}`,
    ).toMatchObject({ error: expect.arrayContaining(['onHttp2SocketError']), close: expect.arrayContaining(['onHttp2SocketClose']) });
    expect(indexers.length, `h2 header indexer: undici opened another connection for a request the cut one had failed, ${WHY}`).toBe(1);
  });

  it("the indexer emits 'error' first and 'close' a turn later, as a TLS socket does", async () => {
    const tcp = new net.Socket();
    const indexer = new H2HeaderIndexer(tcp as unknown as TLSSocket);
    const order: string[] = [];
    indexer.on('error', () => order.push('error'));
    indexer.on('close', () => order.push('close'));
    indexer.destroy(new Error('cut'));
    await new Promise((r) => process.nextTick(r));
    expect(order, 'h2 header indexer: close came in the same turn as the error').toEqual(['error']);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual(['error', 'close']);
  });

  it('a request given to a destroyed HTTP/2 session fails with ERR_HTTP2_INVALID_SESSION, nothing written (the dispatcher sends it again)', async () => {
    // Node 22 and 24 fail a session's streams a turn before its socket closes: undici can hand the
    // next request to the dead session. dispatcher.ts resends only on this code (dead-session.ts).
    const { port } = await h2cServer();
    const session = h2Connect(`http://127.0.0.1:${port}`);
    await new Promise<void>((resolve, reject) => session.once('connect', () => resolve()).once('error', reject));
    session.destroy();
    // Node 20 throws; Node 22 and 24 hand back a stream that emits the error.
    const code = await new Promise<string | undefined>((resolve) => {
      try {
        session.request({ ':method': 'PUT', ':path': '/' }).once('error', (e: NodeJS.ErrnoException) => resolve(e.code));
      } catch (e) {
        resolve((e as NodeJS.ErrnoException).code);
      }
    });
    expect(code, `the code dead-session.ts resends on moved, ${WHY}`).toBe('ERR_HTTP2_INVALID_SESSION');
  });
});
