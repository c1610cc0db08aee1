import { constants as http2constants, createSecureServer, type IncomingHttpHeaders } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createPlatformDispatcher } from '../../../src/platform/transport/dispatcher.js';
import { PlatformHttp } from '../../../src/platform/transport/http.js';
import { makeThrowawayCa } from '../../../src/sim/throwaway-ca.js';
import { tempDir } from '../../helpers/tmp.js';

let ca: ReturnType<typeof makeThrowawayCa>;
/** A bearer of the real platform's length (docs/platform-contract.md, Tokens). */
const BEARER = `Bearer ${'eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCIsImtpZCI6IldkM3F2WDBkbU5RcFREaE9vSjlaS2NEN2JMcjJzRjh5VTF4SGVBNGdNdEkifQ'}.${Buffer.from(
  Array.from({ length: 850 }, (_, i) => (i * 7919) % 251),
).toString('base64url')}`;

/** Node's own HTTP/2 server (nghttp2 decodes every header block: the proof that ours are right). */
async function h2Server(settings: { headerTableSize?: number } = {}, reset?: (h: IncomingHttpHeaders) => boolean) {
  ca = makeThrowawayCa(tempDir('ta-ca-'));
  const seen: IncomingHttpHeaders[] = [];
  const server = createSecureServer({ key: ca.key, cert: ca.cert, settings }, (req, res) => {
    seen.push(req.headers);
    if (reset?.(req.headers)) {
      req.stream.close(http2constants.NGHTTP2_INTERNAL_ERROR);
      return;
    }
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  onTestFinished(() => new Promise<void>((r) => server.close(() => r())));
  return { seen, origin: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

function client(indexAuthorization?: boolean) {
  const dispatcher = createPlatformDispatcher({
    caFile: ca.caFile,
    maxConnections: 2,
    requestTimeoutMs: 5000,
    idleTimeoutMs: 60_000,
    ...(indexAuthorization !== undefined ? { indexAuthorization } : {}),
  });
  onTestFinished(() => dispatcher.destroy());
  const http = new PlatformHttp({ dispatcher, requestTimeoutMs: 5000, maxResponseBytes: 1 << 20 });
  return { dispatcher, http };
}

/** Plaintext bytes sent per request (h2 frames, before TLS) for `n` sequential PUTs. */
async function sentPerRequest(http: PlatformHttp, dispatcher: ReturnType<typeof client>['dispatcher'], origin: string, n: number) {
  const per: number[] = [];
  for (let i = 0; i < n; i++) {
    const before = dispatcher.wire.snapshot().plaintext.sent;
    const r = await http.send({
      method: 'PUT',
      url: `${origin}/otm/api/v5/events`,
      headers: { authorization: BEARER, 'content-type': 'application/json', prefer: 'return=minimal' },
      body: JSON.stringify({ i }),
      what: 'event',
    });
    expect(r.status).toBe(200);
    per.push(dispatcher.wire.snapshot().plaintext.sent - before);
  }
  return per;
}

describe('h2 header indexer: the bearer indexed in HPACK', () => {
  it("Node's h2 server decodes every header exactly; the bearer costs once per connection instead of every request", async () => {
    const { seen, origin } = await h2Server();
    const indexed = client();
    const perIndexed = await sentPerRequest(indexed.http, indexed.dispatcher, origin, 5);
    const plain = client(false);
    const perPlain = await sentPerRequest(plain.http, plain.dispatcher, origin, 5);
    expect(seen).toHaveLength(10);
    for (const h of seen) {
      expect(h.authorization).toBe(BEARER);
      expect(h[':path']).toBe('/otm/api/v5/events');
      expect(h[':method']).toBe('PUT');
      expect(h['content-type']).toBe('application/json');
      expect(h.prefer).toBe('return=minimal');
      expect(h.accept).toBe('application/json');
    }
    console.log(`plaintext bytes sent per request: indexed ${perIndexed.join(', ')}; nghttp2 alone ${perPlain.join(', ')}`);
    // From the second request on, nghttp2 alone sends the whole bearer again (~1,000 B Huffman-coded).
    for (const n of perPlain.slice(1)) expect(n).toBeGreaterThan(1000);
    for (const n of perIndexed.slice(1)) expect(n).toBeLessThan(100);
  });
});

/** Header values over every octet nghttp2 lets through (HTAB, 0x20-0x7e, 0x80-0xff), in pieces. */
function valueOf(i: number): string {
  const octets = [9, ...Array.from({ length: 95 }, (_, k) => 0x20 + k), ...Array.from({ length: 128 }, (_, k) => 0x80 + k)];
  const start = (i * 37) % octets.length;
  const piece = octets.slice(start, start + 20 + (i % 50));
  // No leading or trailing white space: HTTP trims it, which would make the comparison lie.
  return `v${Buffer.from(piece).toString('latin1')}v`;
}

describe('h2 header indexer against nghttp2 under table pressure and resets', () => {
  for (const headerTableSize of [4096, 200, 0])
    it(`server table ${headerTableSize}: 120 requests with changing headers (evictions, Huffman over every octet) decode exactly`, async () => {
      const { seen, origin } = await h2Server({ headerTableSize });
      const { http, dispatcher } = client();
      const sent: Record<string, string>[] = [];
      for (let i = 0; i < 120; i++) {
        const headers: Record<string, string> = {
          authorization: i < 60 ? BEARER : `${BEARER}x`,
          'content-type': 'application/json',
          [`x-custom-${i % 17}`]: valueOf(i),
          'x-request': String(i),
        };
        if (i % 5 === 0) headers.cookie = 'a=1';
        sent.push(headers);
        const r = await http.send({ method: 'PUT', url: `${origin}/p/${i % 3}`, headers, body: 'x'.repeat(i), what: 'x' });
        expect(r.status).toBe(200);
      }
      expect(seen).toHaveLength(120);
      seen.forEach((h, i) => {
        for (const [k, v] of Object.entries(sent[i]!))
          expect(Buffer.from(String(h[k]), 'latin1').toString('hex'), `${i} ${k}`).toBe(Buffer.from(v, 'latin1').toString('hex'));
        expect(h[':path']).toBe(`/p/${i % 3}`);
        expect(h['content-length']).toBe(String(i));
      });
      const wire = dispatcher.wire.snapshot();
      expect(wire.connections).toBe(1);
      if (headerTableSize === 0) {
        // Nothing can be indexed: every request carries the bearer.
        expect(wire.plaintext.sent).toBeGreaterThan(120 * 900);
      } else if (headerTableSize === 4096) {
        // The bearer twice (two tokens), not 120 times: besides it, the bodies (7,140 B) and under
        // 150 B a request (the changing custom value, frames); 120 bearers would be over 120,000 B.
        expect(wire.plaintext.sent).toBeLessThan(3 * 1100 + 7140 + 120 * 150);
      }
    });

  it('a stream the server resets fails alone; the connection and its tables go on', async () => {
    const { seen, origin } = await h2Server({}, (h) => h['x-reset'] === '1');
    const { http, dispatcher } = client();
    const put = (reset: boolean) =>
      http.send({
        method: 'PUT',
        url: `${origin}/otm/api/v5/events`,
        headers: { authorization: BEARER, ...(reset ? { 'x-reset': '1' } : {}) },
        body: '{}',
        what: 'event',
      });
    expect((await put(false)).status).toBe(200);
    await expect(put(true)).rejects.toThrow();
    expect((await put(false)).status).toBe(200);
    expect((await put(false)).status).toBe(200);
    expect(seen.map((h) => h.authorization)).toEqual([BEARER, BEARER, BEARER, BEARER]);
    expect(dispatcher.wire.snapshot().connections).toBe(1);
  });
});
