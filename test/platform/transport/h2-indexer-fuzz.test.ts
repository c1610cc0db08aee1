/**
 * Seeded, bounded fuzzing of the HTTP/2 header indexer against an independent decoder: Node's own
 * h2 server (nghttp2) decodes every block the indexer re-encoded, and must read exactly the header
 * lists that were sent, over random names, octets, table sizes, blocks past one frame and a header
 * table size the server changes mid-connection. A failure prints its seed.
 */
import { createSecureServer, type IncomingHttpHeaders, type ServerHttp2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createPlatformDispatcher } from '../../../src/platform/transport/dispatcher.js';
import { PlatformHttp } from '../../../src/platform/transport/http.js';
import { makeThrowawayCa } from '../../../src/sim/throwaway-ca.js';
import { tempDir } from '../../helpers/tmp.js';
import { seededRandom as prng } from '../../../src/sim/random.js';

const BEARER = `Bearer eyJhbGciOiJSUzI1NiJ9.${Buffer.from(Array.from({ length: 950 }, (_, i) => (i * 7919) % 251)).toString('base64url')}`;
/** Octets nghttp2 lets through in a value: HTAB, 0x20-0x7e, 0x80-0xff. */
const VALUE_OCTETS = [9, ...Array.from({ length: 95 }, (_, k) => 0x20 + k), ...Array.from({ length: 128 }, (_, k) => 0x80 + k)];
const NAME_CHARS = 'abcdefghijklmnopqrstuvwxyz0123456789-';
/** Names the agent or HTTP give a meaning to, which a random list must not take. */
const RESERVED = new Set([
  'authorization',
  'content-length',
  'host',
  'connection',
  'te',
  'transfer-encoding',
  'upgrade',
  'keep-alive',
  'proxy-connection',
]);

function randomName(rnd: () => number): string {
  for (;;) {
    const n = Array.from({ length: 1 + Math.floor(rnd() * 24) }, () => NAME_CHARS[Math.floor(rnd() * NAME_CHARS.length)]).join('');
    if (!RESERVED.has(n) && !n.startsWith('-')) return `x-${n}`;
  }
}

function randomValue(rnd: () => number, max: number): string {
  const len = Math.floor(rnd() * max);
  const octets = Array.from({ length: len }, () => VALUE_OCTETS[Math.floor(rnd() * VALUE_OCTETS.length)]!);
  // HTTP trims white space at either end, which would make the comparison lie.
  return `v${Buffer.from(octets).toString('latin1')}v`;
}

async function h2Server(settings: { headerTableSize?: number; maxHeaderListSize?: number } = {}) {
  const ca = makeThrowawayCa(tempDir('ta-fuzz-ca-'));
  const seen: IncomingHttpHeaders[] = [];
  const sessions: ServerHttp2Session[] = [];
  const server = createSecureServer({ key: ca.key, cert: ca.cert, settings, maxSessionMemory: 64 }, (req, res) => {
    seen.push(req.headers);
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  server.on('session', (s) => sessions.push(s));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  onTestFinished(async () => {
    for (const s of sessions) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  });
  const dispatcher = createPlatformDispatcher({ caFile: ca.caFile, maxConnections: 2, requestTimeoutMs: 20_000, idleTimeoutMs: 60_000 });
  onTestFinished(() => dispatcher.destroy());
  const http = new PlatformHttp({ dispatcher, requestTimeoutMs: 20_000, maxResponseBytes: 1 << 20 });
  return { seen, sessions, dispatcher, http, origin: `https://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

type Server = Awaited<ReturnType<typeof h2Server>>;

async function sendAndCompare(s: Server, headers: Record<string, string>, label: string): Promise<void> {
  const before = s.seen.length;
  const r = await s.http.send({ method: 'PUT', url: `${s.origin}/otm/api/v5/events`, headers, body: '{}', what: 'event' });
  expect(r.status, label).toBe(200);
  const got = s.seen[before]!;
  for (const [k, v] of Object.entries(headers))
    expect(Buffer.from(String(got[k]), 'latin1').toString('hex'), `${label}: ${k}`).toBe(Buffer.from(v, 'latin1').toString('hex'));
}

describe('h2 header indexer, fuzzed against nghttp2 (seeded)', () => {
  for (const seed of [1, 2, 3, 4, 5])
    it(`seed ${seed}: random header lists and a random server table size decode exactly on one connection`, async () => {
      const rnd = prng(seed);
      const headerTableSize = [0, 64, 200, 1000, 4096, Math.floor(rnd() * 4096)][seed % 6]!;
      const s = await h2Server({ headerTableSize });
      // A pool of names and values, so that fields repeat (indexed), evict and come back.
      const names = Array.from({ length: 12 }, () => randomName(rnd));
      const values = Array.from({ length: 20 }, () => randomValue(rnd, 300));
      for (let i = 0; i < 30; i++) {
        const headers: Record<string, string> = { authorization: rnd() < 0.9 ? BEARER : `${BEARER}${i}` };
        const n = 1 + Math.floor(rnd() * 8);
        for (let k = 0; k < n; k++)
          headers[names[Math.floor(rnd() * names.length)]!] =
            rnd() < 0.7 ? values[Math.floor(rnd() * values.length)]! : randomValue(rnd, 600);
        await sendAndCompare(s, headers, `seed ${seed} table ${headerTableSize} request ${i}`);
      }
      expect(s.dispatcher.wire.snapshot().connections).toBe(1);
      expect(s.dispatcher.wire.snapshot().headerIndexerOff).toEqual([]);
    });

  it('header blocks over 16 KB go out as HEADERS + CONTINUATION and decode exactly', async () => {
    const rnd = prng(16);
    const s = await h2Server({ maxHeaderListSize: 1 << 20 });
    for (const size of [16_000, 40_000, 70_000]) {
      const before = s.dispatcher.wire.snapshot().headerBlocks.sentBytes;
      const headers: Record<string, string> = { authorization: BEARER };
      for (let k = 0; k * 8000 < size; k++) headers[`x-big-${k}`] = randomValue(rnd, 8000);
      await sendAndCompare(s, headers, `${size} B of headers`);
      const sent = s.dispatcher.wire.snapshot().headerBlocks.sentBytes - before;
      if (size > 16_384) expect(sent, 'one block, more than one frame').toBeGreaterThan(16_384);
    }
    // Small blocks after the big ones: the tables stayed in step.
    await sendAndCompare(s, { authorization: BEARER, 'x-after': 'small' }, 'after the big blocks');
    expect(s.dispatcher.wire.snapshot().connections).toBe(1);
  });

  it('a SETTINGS_HEADER_TABLE_SIZE the server changes mid-connection (down to 0 and up again) is followed', async () => {
    const rnd = prng(42);
    const s = await h2Server();
    const sizes = [4096, 100, 0, 2048, 300, 4096];
    let i = 0;
    for (const size of sizes) {
      if (i > 0) {
        const session = s.sessions[0]!;
        await new Promise<void>((resolve, reject) => session.settings({ headerTableSize: size }, (err) => (err ? reject(err) : resolve())));
      }
      for (let k = 0; k < 6; k++, i++)
        await sendAndCompare(
          s,
          { authorization: BEARER, 'x-table': String(size), [`x-n${k % 3}`]: randomValue(rnd, 200) },
          `table ${size} request ${i}`,
        );
    }
    const w = s.dispatcher.wire.snapshot();
    expect(w.connections).toBe(1);
    // At 0 nothing is indexed: those requests carried the bearer whole, the others did not.
    expect(w.headerBlocks.sentBytes).toBeLessThan(w.headerBlocks.nghttp2Bytes);
  });
});
