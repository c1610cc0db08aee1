import { execFileSync } from 'node:child_process';
import { getEventListeners } from 'node:events';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, Client, Pool } from 'undici';
import { PlatformError } from '../../../src/errors.js';
import { createPlatformDispatcher } from '../../../src/platform/transport/dispatcher.js';
import { mayHaveReachedServer, errorFromResponse } from '../../../src/platform/transport/http-errors.js';
import { PlatformHttp } from '../../../src/platform/transport/http.js';
import { PlatformSimulator } from '../../../src/sim/index.js';
import { issueServerCertificate, makeThrowawayCa } from '../../../src/sim/throwaway-ca.js';
import { tempDir } from '../../helpers/tmp.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
});

async function sim(): Promise<{
  sim: PlatformSimulator;
  http: (o?: { timeoutMs?: number; maxBytes?: number }) => PlatformHttp;
  token: string;
  eventsUrl: string;
}> {
  const s = new PlatformSimulator({ users: [{ username: 'u', password: 'p' }] });
  const urls = await s.start();
  const dispatcher = new Agent({ connections: 4 });
  closers.push(async () => {
    await s.stop();
    await dispatcher.close();
  });
  const http = (o: { timeoutMs?: number; maxBytes?: number } = {}) =>
    new PlatformHttp({ dispatcher, requestTimeoutMs: o.timeoutMs ?? 5000, maxResponseBytes: o.maxBytes ?? 1 << 20 });
  const login = await http().send({
    method: 'POST',
    url: `${urls.authUrl}/auth/password`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'username=u&password=p',
    what: 'login',
  });
  return { sim: s, http, token: (login.body as { access_token: string }).access_token, eventsUrl: `${urls.planningUrl}/otm/api/v5/events` };
}

const event = (id: string) =>
  JSON.stringify({ eventType: 'locationUpdateEvent', id, geoReference: { type: 'latLonPointGeoReference', lat: 52, lon: 5 } });

async function waitForClose(closed: () => boolean): Promise<void> {
  const t0 = Date.now();
  while (!closed()) {
    if (Date.now() - t0 > 10_000) throw new Error('the server never saw the connection close');
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });
  return (server.address() as AddressInfo).port;
}

describe('PlatformHttp: hygiene of every platform call', () => {
  it('a slow-drip answer (one byte every 200 ms) is cut off by the total deadline, not held for ever', async () => {
    const { sim: s, http, token, eventsUrl } = await sim();
    s.faults.set('events', { dripMs: 200 });
    // The answer (the event echoed, over 100 bytes) takes 20 s and more: a 3 s deadline cuts it
    // and still leaves a loaded machine time to hand the request to the server before it fires.
    const e = await http({ timeoutMs: 3000 })
      .send({
        method: 'PUT',
        url: eventsUrl,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: event('a'),
        what: 'event upload',
      })
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(PlatformError);
    expect(e).toMatchObject({ code: 'PLATFORM_TIMEOUT', errorClass: 'transient' });
    expect(mayHaveReachedServer(e)).toBe(true); // the event was processed: the retry must be idempotent
    expect(s.events.has('a')).toBe(true);
  });

  it('an answer larger than maxResponseBytes is refused, with or without Content-Length', async () => {
    const { sim: s, http, token, eventsUrl } = await sim();
    for (let i = 0; i < 40; i++)
      await http().send({
        method: 'PUT',
        url: eventsUrl,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: event(`e${i}`),
        what: 'x',
      });
    const adminEvents = `${eventsUrl.replace('/otm/api/v5/events', '')}/_sim/events`;
    await expect(http({ maxBytes: 2048 }).send({ method: 'GET', url: adminEvents, what: 'events' })).rejects.toMatchObject({
      code: 'PLATFORM_RESPONSE_TOO_LARGE',
      errorClass: 'transient',
    });
    expect(s.events.size).toBe(40);
    const port = await listen(
      createHttpServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' }); // chunked, no length
        for (let i = 0; i < 10; i++) res.write(`"${'x'.repeat(1000)}",`);
        res.end();
      }),
    );
    await expect(http({ maxBytes: 4096 }).send({ method: 'GET', url: `http://127.0.0.1:${port}/`, what: 'chunked' })).rejects.toMatchObject(
      { code: 'PLATFORM_RESPONSE_TOO_LARGE' },
    );
  });

  it('a 2xx past maxResponseBytes whose body is optional is the answer, cut off unread; a non-2xx past it is still refused', async () => {
    const { http } = await sim();
    let written = 0;
    let closed = false;
    const port = await listen(
      createHttpServer((req, res) => {
        res.writeHead(req.url === '/bad' ? 400 : 200, { 'content-type': 'application/json' }); // chunked, no length
        res.on('close', () => (closed = true));
        // An endless answer: only the client stopping ends it.
        const more = (): void => {
          while (!res.destroyed && res.write(`"${'x'.repeat(1000)}",`)) written += 1003;
          if (!res.destroyed) res.once('drain', more);
        };
        more();
      }),
    );
    const r = await http({ maxBytes: 4096 }).send({
      method: 'PUT',
      url: `http://127.0.0.1:${port}/`,
      what: 'event',
      answerBodyOptional: true,
    });
    expect(r).toMatchObject({ status: 200, text: '', oversized: { limitBytes: 4096 } });
    expect(r.body).toBeUndefined();
    await waitForClose(() => closed);
    // The server stopped once the client closed: about a socket buffer's worth, not the endless body.
    expect(written).toBeLessThan(8 * 1024 * 1024);
    await expect(
      http({ maxBytes: 4096 }).send({ method: 'PUT', url: `http://127.0.0.1:${port}/bad`, what: 'event', answerBodyOptional: true }),
    ).rejects.toMatchObject({ code: 'PLATFORM_RESPONSE_TOO_LARGE' });
    // Without the flag, a 2xx past the bound is refused as before (a token or registration answer must be read whole).
    await expect(http({ maxBytes: 4096 }).send({ method: 'GET', url: `http://127.0.0.1:${port}/`, what: 'token' })).rejects.toMatchObject({
      code: 'PLATFORM_RESPONSE_TOO_LARGE',
    });
  });

  it('a 200 with an HTML body (captive portal, proxy page) is a transient error, never a success', async () => {
    const { sim: s, http, token, eventsUrl } = await sim();
    s.faults.set('events', { htmlRate: 1 });
    await expect(
      http().send({
        method: 'PUT',
        url: eventsUrl,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: event('h'),
        what: 'event upload',
      }),
    ).rejects.toMatchObject({ code: 'PLATFORM_NOT_JSON', errorClass: 'transient', status: 200 });
    expect(s.events.size).toBe(0);
  });

  it('error statuses are answers for the caller to classify, with the platform message and Retry-After', async () => {
    const { sim: s, http, token, eventsUrl } = await sim();
    s.faults.set('events', { status429: { rate: 1, retryAfterS: 30 } });
    const res = await http().send({
      method: 'PUT',
      url: eventsUrl,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: event('r'),
      what: 'event upload',
    });
    expect(res.status).toBe(429);
    const e = errorFromResponse(res, 'event upload', Date.now(), 'events');
    expect(e).toMatchObject({ code: 'PLATFORM_RATE_LIMITED', errorClass: 'transient', retryAfterMs: 30_000, status: 429 });
    s.faults.set('events', undefined);
    const bad = await http().send({
      method: 'PUT',
      url: eventsUrl,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{}',
      what: 'event upload',
    });
    expect(bad.status).toBe(400);
    expect(errorFromResponse(bad, 'event upload', Date.now(), 'events').message).toMatch(/eventType: eventType is required/);
  });

  it('connection refused never reached the server; a dropped connection may have', async () => {
    const { sim: s, http, token, eventsUrl } = await sim();
    const refused = await http()
      .send({ method: 'GET', url: 'http://127.0.0.1:1/', what: 'nothing' })
      .catch((x: unknown) => x);
    expect(refused).toMatchObject({ code: 'PLATFORM_UNREACHABLE', errorClass: 'transient' });
    expect(mayHaveReachedServer(refused)).toBe(false);
    s.faults.set('events', { dropRate: 1 });
    const dropped = await http()
      .send({
        method: 'PUT',
        url: eventsUrl,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: event('d'),
        what: 'event upload',
      })
      .catch((x: unknown) => x);
    expect(dropped).toMatchObject({ code: 'PLATFORM_UNREACHABLE', errorClass: 'transient' });
    expect(mayHaveReachedServer(dropped)).toBe(true);
  });

  it("the caller's own abort is passed through as is, not dressed as a platform error", async () => {
    const { sim: s, http, token, eventsUrl } = await sim();
    s.faults.set('events', { latencyMs: 5000 });
    const ac = new AbortController();
    const p = http().send({
      method: 'PUT',
      url: eventsUrl,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: event('x'),
      what: 'x',
      signal: ac.signal,
    });
    setTimeout(() => ac.abort(new Error('shutting down')), 50);
    await expect(p).rejects.toThrow('shutting down');
  });

  it('one caller signal shared by many requests gets one listener, and its abort ends them all', async () => {
    const { sim: s, http, token, eventsUrl } = await sim();
    s.faults.set('events', { latencyMs: 5000 });
    const ac = new AbortController();
    const client = http();
    const sends = Array.from({ length: 20 }, (_, i) =>
      client
        .send({
          method: 'PUT',
          url: eventsUrl,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: event(`s${i}`),
          what: 'x',
          signal: ac.signal,
        })
        .catch((e: unknown) => e),
    );
    await new Promise((r) => setImmediate(r));
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(1);
    ac.abort(new Error('shutting down'));
    const results = await Promise.all(sends);
    expect(results.map((e) => (e as Error).message)).toEqual(Array(20).fill('shutting down'));
  });

  it('probe() returns the status of any answer, HTML included (doctor address check)', async () => {
    const port = await listen(
      createHttpServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>portal</html>')),
    );
    const dispatcher = createPlatformDispatcher({ maxConnections: 1, requestTimeoutMs: 2000 });
    closers.push(() => dispatcher.close());
    const http = new PlatformHttp({ dispatcher, requestTimeoutMs: 2000, maxResponseBytes: 1024 });
    expect(await http.probe(`http://127.0.0.1:${port}/`, 'address check')).toBe(200);
  });

  it("the dispatcher's Client and Pool, imported alone for memory, are undici's own classes", async () => {
    expect((await import('undici/lib/dispatcher/client.js')).default).toBe(Client);
    expect((await import('undici/lib/dispatcher/pool.js')).default).toBe(Pool);
  });
});

describe('TLS: verification on, with an optional extra CA (platform.caFile)', () => {
  it('refuses a certificate of an unknown CA as a configuration problem, accepts it with caFile', async () => {
    const dir = tempDir();
    const key = path.join(dir, 'key.pem');
    const cert = path.join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    const server = createHttpsServer({ key: readFileSync(key), cert: readFileSync(cert) }, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
    const port = await listen(server as unknown as Server);
    const url = `https://127.0.0.1:${port}/`;
    const strict = createPlatformDispatcher({ maxConnections: 2, requestTimeoutMs: 5000 });
    const trusting = createPlatformDispatcher({ caFile: cert, maxConnections: 2, requestTimeoutMs: 5000 });
    closers.push(() => strict.close());
    closers.push(() => trusting.close());
    const e = await new PlatformHttp({ dispatcher: strict, requestTimeoutMs: 5000, maxResponseBytes: 1024 })
      .send({ method: 'GET', url, what: 'tls' })
      .catch((x: unknown) => x);
    expect(e).toMatchObject({ code: 'PLATFORM_TLS', errorClass: 'config' });
    expect((e as Error).message).toMatch(/platform\.caFile/);
    const ok = await new PlatformHttp({ dispatcher: trusting, requestTimeoutMs: 5000, maxResponseBytes: 1024 }).send({
      method: 'GET',
      url,
      what: 'tls',
    });
    expect(ok.body).toEqual({ ok: true });
  });

  it('a certificate refused while the clock was wrong is blamed on the clock even if the clock is set before the error is classified', async () => {
    const caDir = tempDir('ta-ca-');
    const ca = makeThrowawayCa(caDir);
    const s = new PlatformSimulator({ users: [{ username: 'u', password: 'p' }] });
    const urls = await s.start({ tls: { ...issueServerCertificate(caDir, 'expired', -1), protocols: 'h2' } });
    const dispatcher = createPlatformDispatcher({ caFile: ca.caFile, maxConnections: 2, requestTimeoutMs: 5000 });
    closers.push(async () => {
      await s.stop();
      await dispatcher.close();
    });
    // Two years ahead until the request is handed to the network, set (offset 0) from then on: the
    // handshake met the wrong clock, and the error is handled after the clock was set.
    const TWO_YEARS_MS = 2 * 365 * 86_400_000;
    let clockSet = false;
    const clockFacts = () => ({ wallMs: Date.now(), offsetMs: clockSet ? 0 : TWO_YEARS_MS });
    const settingTheClock = {
      dispatch: (opts: Parameters<typeof dispatcher.dispatch>[0], handler: Parameters<typeof dispatcher.dispatch>[1]) => {
        clockSet = true;
        return dispatcher.dispatch(opts, handler);
      },
    };
    const e = await new PlatformHttp({ dispatcher: settingTheClock, requestTimeoutMs: 5000, maxResponseBytes: 1024, clockFacts })
      .send({ method: 'GET', url: `${urls.authUrl}/`, what: 'token' })
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(PlatformError);
    expect(e).toMatchObject({ code: 'PLATFORM_TLS_CLOCK', details: { clockOffsetMs: TWO_YEARS_MS } });
  });

  it('an unreadable or non-PEM caFile is a configuration error naming the key', () => {
    expect(() => createPlatformDispatcher({ caFile: '/nonexistent/ca.pem', maxConnections: 1, requestTimeoutMs: 1000 })).toThrow(
      /platform\.caFile: cannot read/,
    );
    const junk = path.join(tempDir(), 'junk.pem');
    execFileSync('sh', ['-c', `echo hello > ${junk}`]);
    expect(() => createPlatformDispatcher({ caFile: junk, maxConnections: 1, requestTimeoutMs: 1000 })).toThrow(/holds no PEM certificate/);
  });
});
