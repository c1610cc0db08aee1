/**
 * The header indexer at the frame level, over a socket the test holds both ends of: HEADERS with
 * PADDED and PRIORITY both ways, frames split at every byte, SETTINGS acknowledged mid-stream,
 * a block of nghttp2's it cannot read, and seeded garbage from the server.
 */
import { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { H2HeaderIndexer } from '../../../src/platform/transport/h2-header-indexer.js';
import { HpackDecoder } from '../../../src/platform/transport/hpack/decoder.js';
import { HpackEncoder } from '../../../src/platform/transport/hpack/encoder.js';
import { frameOf } from './h2-front.js';
import { seededRandom as prng } from '../../../src/sim/random.js';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const BEARER = `Bearer ${'t'.repeat(1200)}`;
const [HEADERS, SETTINGS, CONTINUATION] = [0x1, 0x4, 0x9];
const [END_STREAM, ACK, END_HEADERS, PADDED, PRIORITY] = [0x1, 0x1, 0x4, 0x8, 0x20];

/** The TLS socket under the indexer: what the indexer writes is collected, what the server sends is emitted. */
function harness(onFault?: (reason: string) => void) {
  const written: Buffer[] = [];
  const tls = new Duplex({
    read() {},
    write(chunk: Buffer, _e, cb) {
      written.push(Buffer.from(chunk));
      cb();
    },
  });
  const indexer = new H2HeaderIndexer(tls as unknown as TLSSocket, onFault ? { onFault } : {});
  const received: Buffer[] = [];
  indexer.on('data', (c: Buffer) => received.push(c));
  const errors: Error[] = [];
  indexer.on('error', (e) => errors.push(e));
  const write = (b: Buffer) => new Promise<void>((resolve) => indexer.write(b, () => resolve()));
  return { tls, indexer, written, received, errors, write, fromServer: (b: Buffer) => tls.emit('data', b) };
}

/** Frames of a byte stream (after the preface). */
function framesOf(buf: Buffer): { type: number; flags: number; streamId: number; payload: Buffer }[] {
  const out = [];
  let b = buf.subarray(PREFACE.length);
  while (b.length >= 9) {
    const len = b.readUIntBE(0, 3);
    out.push({ type: b[3]!, flags: b[4]!, streamId: b.readUInt32BE(5) & 0x7fffffff, payload: b.subarray(9, 9 + len) });
    b = b.subarray(9 + len);
  }
  return out;
}

/** nghttp2's side: its deflater never indexes authorization. */
function nghttp2Block(enc: HpackEncoder, extra: Record<string, string> = {}): Buffer {
  return enc.encode([
    { name: ':method', value: 'PUT', indexing: 'index' },
    { name: ':path', value: '/otm/api/v5/events', indexing: 'index' },
    { name: 'authorization', value: BEARER, indexing: 'never' },
    ...Object.entries(extra).map(([name, value]) => ({ name, value, indexing: 'index' as const })),
  ]);
}

describe('h2 header indexer, frame by frame', () => {
  it('HEADERS with PADDED and PRIORITY from nghttp2, split at every byte: priority kept, padding dropped, bearer indexed', async () => {
    const enc = new HpackEncoder();
    const blocks = [nghttp2Block(enc), nghttp2Block(enc, { 'x-a': '1' })];
    const priority = Buffer.from([0x80, 0, 0, 0, 0x0f]);
    const input = Buffer.concat([
      PREFACE,
      frameOf(
        HEADERS,
        END_HEADERS | PADDED | PRIORITY | END_STREAM,
        1,
        Buffer.concat([Buffer.from([7]), priority, blocks[0]!, Buffer.alloc(7)]),
      ),
      // The second block in a HEADERS (padded) and a CONTINUATION.
      frameOf(HEADERS, PADDED, 3, Buffer.concat([Buffer.from([3]), blocks[1]!.subarray(0, 10), Buffer.alloc(3)])),
      frameOf(CONTINUATION, END_HEADERS, 3, blocks[1]!.subarray(10)),
    ]);
    for (const step of [1, 7, 9, 10, 4096]) {
      const h = harness();
      for (let at = 0; at < input.length; at += step) await h.write(input.subarray(at, at + step));
      const frames = framesOf(Buffer.concat(h.written));
      expect(
        frames.map((f) => [f.type, f.streamId]),
        `step ${step}`,
      ).toEqual([
        [HEADERS, 1],
        [HEADERS, 3],
      ]);
      const [first, second] = frames;
      expect(first!.flags).toBe(END_HEADERS | PRIORITY | END_STREAM);
      expect(first!.payload.subarray(0, 5)).toEqual(priority);
      expect(second!.flags).toBe(END_HEADERS);
      const dec = new HpackDecoder({ limit: 1 << 16 });
      const a = dec.decode(first!.payload.subarray(5));
      const b = dec.decode(second!.payload);
      expect(a.map((f) => [f.name, f.value])).toEqual([
        [':method', 'PUT'],
        [':path', '/otm/api/v5/events'],
        ['authorization', BEARER],
      ]);
      expect(a.find((f) => f.name === 'authorization')!.representation).toBe('incremental');
      expect(b.find((f) => f.name === 'authorization')!.representation).toBe('indexed');
      expect(b.at(-1)).toMatchObject({ name: 'x-a', value: '1' });
      expect(h.errors).toEqual([]);
    }
  });

  it("the server's HEADERS with PADDED and PRIORITY and a SETTINGS split across reads pass unchanged; the table size applies at our ACK", async () => {
    const h = harness();
    const enc = new HpackEncoder();
    await h.write(Buffer.concat([PREFACE, frameOf(HEADERS, END_HEADERS, 1, nghttp2Block(enc))]));
    const fromServer = Buffer.concat([
      frameOf(
        HEADERS,
        END_HEADERS | PADDED | PRIORITY,
        1,
        Buffer.concat([Buffer.from([4]), Buffer.from([0, 0, 0, 0, 9]), Buffer.from([0x88]), Buffer.alloc(4)]),
      ),
      frameOf(SETTINGS, 0, 0, Buffer.from([0, 1, 0, 0, 0, 100])),
    ]);
    for (let at = 0; at < fromServer.length; at += 5) h.fromServer(fromServer.subarray(at, at + 5));
    expect(Buffer.concat(h.received)).toEqual(fromServer);
    // Before our ACK the encoder keeps its table; after it, the next block opens with a size update to 100.
    await h.write(Buffer.concat([frameOf(SETTINGS, ACK, 0, Buffer.alloc(0)), frameOf(HEADERS, END_HEADERS, 3, nghttp2Block(enc))]));
    const last = framesOf(Buffer.concat(h.written)).at(-1)!;
    expect(last.payload[0]! & 0xe0, 'a dynamic table size update first').toBe(0x20);
    // 100 with a 5-bit prefix: 31, then 69 (RFC 7541 5.1).
    expect([...last.payload.subarray(0, 2)]).toEqual([0x3f, 69]);
    expect(h.errors).toEqual([]);
  });

  it("a block of nghttp2's it cannot read: the connection fails with an error and onFault names it; nothing is thrown", async () => {
    const faults: string[] = [];
    const h = harness((r) => faults.push(r));
    await h.write(Buffer.concat([PREFACE, frameOf(HEADERS, END_HEADERS, 1, Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff]))]));
    await new Promise((r) => setImmediate(r));
    expect(h.errors.length).toBe(1);
    expect(faults).toHaveLength(1);
    expect(faults[0]).toMatch(/could not re-encode/);
  });

  it('seeded garbage from the server never throws out of the indexer and reaches nghttp2 byte for byte', async () => {
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
      const rnd = prng(seed);
      const faults: string[] = [];
      const h = harness((r) => faults.push(r));
      await h.write(Buffer.concat([PREFACE, frameOf(HEADERS, END_HEADERS, 1, nghttp2Block(new HpackEncoder()))]));
      const sent: Buffer[] = [];
      for (let i = 0; i < 200; i++) {
        const chunk = Buffer.from(Array.from({ length: 1 + Math.floor(rnd() * 64) }, () => Math.floor(rnd() * 256)));
        sent.push(chunk);
        expect(() => h.fromServer(chunk), `seed ${seed} chunk ${i}`).not.toThrow();
      }
      // The indexer may have ended the connection (a COMPRESSION_ERROR reset by chance); until then it passed everything.
      const passed = Buffer.concat(h.received);
      expect(Buffer.concat(sent).subarray(0, passed.length).equals(passed), `seed ${seed}`).toBe(true);
      if (h.indexer.destroyed) expect(faults.length, `seed ${seed}: destroyed only for a refusal`).toBe(1);
    }
  });
});
