import { describe, expect, it, onTestFinished } from 'vitest';
import { createPlatformDispatcher } from '../../../src/platform/transport/dispatcher.js';
import { PlatformHttp } from '../../../src/platform/transport/http.js';
import { h2Front, frameOf, type FrontMisbehaviour } from './h2-front.js';

/** A bearer of the real platform's length. */
const BEARER = `Bearer eyJhbGciOiJSUzI1NiJ9.${Buffer.from(Array.from({ length: 900 }, (_, i) => (i * 7919) % 251)).toString('base64url')}`;

function client(caFile: string, indexAuthorization?: boolean) {
  const warnings: { obj: unknown; msg: string }[] = [];
  const dispatcher = createPlatformDispatcher({
    caFile,
    maxConnections: 2,
    requestTimeoutMs: 10_000,
    idleTimeoutMs: 60_000,
    ...(indexAuthorization !== undefined ? { indexAuthorization } : {}),
    logger: { warn: (obj: unknown, msg?: string) => void warnings.push({ obj, msg: msg ?? '' }) } as never,
  });
  onTestFinished(() => dispatcher.destroy());
  const http = new PlatformHttp({ dispatcher, requestTimeoutMs: 10_000, maxResponseBytes: 1 << 20 });
  return { dispatcher, http, warnings };
}

const event = (http: PlatformHttp, origin: string, id: string) =>
  http.send({
    method: 'PUT',
    url: `${origin}/otm/api/v5/events`,
    headers: { authorization: BEARER, 'content-type': 'application/json', 'x-event-id': id },
    body: JSON.stringify({ id }),
    what: 'event',
  });

/** 40 events in waves of 10 at once (the uploader's in-flight window): every answer a 200. */
async function sendEvents(http: PlatformHttp, origin: string): Promise<string[]> {
  const ids: string[] = [];
  for (let wave = 0; wave < 4; wave++) {
    const batch = Array.from({ length: 10 }, (_, k) => `e${wave * 10 + k}`);
    ids.push(...batch);
    const answers = await Promise.all(batch.map((id) => event(http, origin, id)));
    for (const a of answers) expect(a.status).toBe(200);
  }
  return ids;
}

const refusals: [string, FrontMisbehaviour][] = [
  ['GOAWAY COMPRESSION_ERROR', { kind: 'refuse', frame: 'GOAWAY', code: 0x9 }],
  [
    'GOAWAY PROTOCOL_ERROR whose debug text names the header block',
    { kind: 'refuse', frame: 'GOAWAY', code: 0x1, debug: 'invalid header block' },
  ],
  ['RST_STREAM COMPRESSION_ERROR (the server keeps the connection open)', { kind: 'refuse', frame: 'RST_STREAM', code: 0x9 }],
];

describe('h2 header indexer: the way back when a server refuses an indexed bearer', () => {
  for (const [name, misbehaviour] of refusals)
    it(`${name}: retried once on the library's own encoding, the host stays on it; every event delivered once`, async () => {
      const front = await h2Front(misbehaviour);
      const { http, dispatcher, warnings } = client(front.caFile);
      const ids = await sendEvents(http, front.origin);

      // Delivered, each exactly once, as the server behind the front counted them.
      expect([...front.deliveries.keys()].sort()).toEqual([...ids].sort());
      for (const [id, n] of front.deliveries) expect(n, `event ${id}`).toBe(1);
      // One refusal, then nghttp2's never-indexed bearer on every later connection.
      expect(front.refusals).toBe(1);
      expect(front.connections.length).toBeGreaterThanOrEqual(2);
      for (const c of front.connections.slice(1)) for (const r of c.authorization) expect(r).toBe('never');
      // One log line and one status entry, naming the host and why, never the bearer.
      const off = dispatcher.wire.snapshot().headerIndexerOff;
      expect(off).toHaveLength(1);
      expect(off[0]!.origin).toBe(front.origin);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.msg).toMatch(/header indexer off/);
      expect(JSON.stringify(warnings)).not.toContain(BEARER.slice(7, 40));
      console.log(`${name}: ${off[0]!.reason}; ${front.connections.length} connections`);
    });

  it('a host that takes the indexed bearer keeps it: no fallback, one connection', async () => {
    const front = await h2Front();
    const { http, dispatcher, warnings } = client(front.caFile);
    await sendEvents(http, front.origin);
    for (const [, n] of front.deliveries) expect(n).toBe(1);
    expect(front.deliveries.size).toBe(40);
    expect(front.connections).toHaveLength(1);
    expect(front.connections[0]!.authorization.filter((r) => r === 'indexed').length).toBeGreaterThan(30);
    expect(dispatcher.wire.snapshot().headerIndexerOff).toEqual([]);
    expect(warnings).toEqual([]);
  });

  it('platform.http2HeaderIndexing false: nghttp2 alone from the first request', async () => {
    const front = await h2Front({ kind: 'refuse', frame: 'GOAWAY', code: 0x9 });
    const { http, dispatcher } = client(front.caFile, false);
    await sendEvents(http, front.origin);
    expect(front.refusals).toBe(0);
    expect(front.connections).toHaveLength(1);
    expect(new Set(front.connections[0]!.authorization)).toEqual(new Set(['never']));
    expect(dispatcher.wire.snapshot().headerBlocks.count).toBe(0);
  });
});

describe('h2 header indexer: a corrupt or truncated answer from the server', () => {
  const cases: [string, Buffer][] = [
    // A HEADERS frame whose block is not HPACK (index 0 is invalid): nghttp2's decoder fails.
    [
      'a HEADERS frame with a corrupt header block',
      Buffer.concat([frameOf(0x4, 0, 0, Buffer.alloc(0)), frameOf(0x1, 0x5, 1, Buffer.from([0x80, 0xff, 0xff]))]),
    ],
    // A frame header that promises 100 bytes, then the connection ends.
    ['a truncated frame', Buffer.concat([frameOf(0x4, 0, 0, Buffer.alloc(0)), frameOf(0x0, 0, 1, Buffer.alloc(100)).subarray(0, 30)])],
    // Half a frame header.
    ['half a frame header', Buffer.from([0x00, 0x00, 0x06, 0x04])],
    // A SETTINGS frame of the wrong length (not a multiple of 6).
    ['a SETTINGS frame of 5 bytes', frameOf(0x4, 0, 0, Buffer.alloc(5))],
  ];
  for (const [name, bytes] of cases)
    it(`${name}: the request fails as a transient error, the process lives, the next attempt is delivered once`, async () => {
      const front = await h2Front({ kind: 'corrupt', bytes, times: 1 });
      const { http, dispatcher } = client(front.caFile);
      const err = await event(http, front.origin, 'a').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, 'the corrupt answer failed the request').toBeDefined();
      expect(err).toMatchObject({ errorClass: 'transient', retryable: true });
      // The uploader's retry, by hand: the same event again.
      expect((await event(http, front.origin, 'a')).status).toBe(200);
      expect(front.deliveries.get('a')).toBe(1);
      // Not the indexer's doing: the host keeps it.
      expect(dispatcher.wire.snapshot().headerIndexerOff).toEqual([]);
    });
});
