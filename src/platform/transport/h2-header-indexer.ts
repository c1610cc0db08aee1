/**
 * The plaintext stream between undici's HTTP/2 session and the TLS socket, which re-encodes the
 * header blocks the agent sends so that the bearer token is indexed in HPACK.
 *
 * Why: nghttp2 (under node:http2, which undici's h2 client uses) hard-codes `authorization` as a
 * never-indexed literal in its HPACK deflater, so the platform's ~1,300-character bearer crossed
 * the SIM link whole with every request (measured: 1,218 B on the second and third request of one
 * connection, the same value under another header name 71 and 62 B). Node offers no switch for it.
 *
 * How: the outbound frame stream is parsed; HEADERS (+ CONTINUATION) blocks are decoded with a
 * decoder that mirrors nghttp2's deflater table and encoded again with an encoder of our own whose
 * table is the one the server's decoder keeps. Every other frame passes unchanged, in order; the
 * inbound stream passes unchanged too, read only for the server's SETTINGS_HEADER_TABLE_SIZE,
 * which the encoder honours (0 included) from the moment nghttp2 acknowledges it, as RFC 7541 4.2
 * asks, and for a refusal of our blocks (COMPRESSION_ERROR, a GOAWAY naming the header block),
 * which `onFault` reports so that the dispatcher falls back to nghttp2's encoding for that host.
 * Fields nghttp2 sent as never-indexed stay never-indexed, except `authorization`.
 *
 * What it rests on in undici and why: docs/decisions/header-indexer.md (undici-contract.test.ts
 * fails, naming the indexer, when one of those internals moves).
 *
 * Why indexing the bearer is safe here: never-indexing protects a secret on a connection that
 * also carries content an attacker chooses (CRIME/HPACK-style attacks guess a secret by watching
 * whether a guessed header value compresses against it). These connections carry only the agent's
 * own requests to one platform origin, built from its own configuration and GNSS fixes; no third
 * party can place a header on them, so there is nothing to guess against. The token also stays on
 * the one TLS connection it was sent on: the table lives and dies with it.
 *
 * TLS, certificate checks and the byte counter stay below this layer (connector.ts); GOAWAY, RST
 * and every other frame are nghttp2's as before.
 */
import { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { HpackDecoder, type HeaderField } from './hpack/decoder.js';
import { HpackEncoder, type EncoderField } from './hpack/encoder.js';
import { entrySize } from './hpack/table.js';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const FRAME_HEADER = 9;
const HEADERS = 0x1;
const RST_STREAM = 0x3;
const SETTINGS = 0x4;
const GOAWAY = 0x7;
const CONTINUATION = 0x9;
const END_STREAM = 0x1;
const ACK = 0x1;
const END_HEADERS = 0x4;
const PADDED = 0x8;
const PRIORITY = 0x20;
const SETTINGS_HEADER_TABLE_SIZE = 0x1;
/** RFC 9113 section 7: the peer could not keep its header compression context. */
const COMPRESSION_ERROR = 0x9;
/** A GOAWAY's debug text that names the header block (nghttp2, h2o, Envoy, Go's x/net word it so). */
const NAMES_HEADER_BLOCK = /hpack|header|compress|decod|dynamic table/i;
/** Every peer accepts frames this large (RFC 9113 4.2: SETTINGS_MAX_FRAME_SIZE is at least 16,384). */
const MAX_FRAME = 16_384;
/** The table the encoder uses at most (the protocol's default; the server may allow less). */
const PREFERRED_TABLE_SIZE = 4096;
/** Names whose values change with every request: indexing them would only evict useful entries. */
const VARYING = new Set(['content-length']);

/** How many header-block bytes went in (nghttp2's) and out (re-encoded), for tests and bench:wire. */
export interface HeaderIndexerCounts {
  blocks: number;
  bytesIn: number;
  bytesOut: number;
}

export interface HeaderIndexerOptions {
  onBlock?: (nghttp2Bytes: number, sentBytes: number) => void;
  onFault?: (reason: string) => void;
}

interface PendingBlock {
  streamId: number;
  flags: number;
  priority: Buffer | undefined;
  fragments: Buffer[];
}

export class H2HeaderIndexer extends Duplex {
  /** undici chooses its HTTP/2 client by this (client.js: `socket.alpnProtocol === 'h2'`). */
  readonly alpnProtocol = 'h2';
  readonly encrypted = true;
  readonly counts: HeaderIndexerCounts = { blocks: 0, bytesIn: 0, bytesOut: 0 };
  readonly #tls: TLSSocket;
  /** Mirrors nghttp2's deflater; nghttp2 follows the server's table size itself and says so in its blocks. */
  readonly #decoder = new HpackDecoder({ limit: 1 << 16 });
  readonly #encoder = new HpackEncoder(PREFERRED_TABLE_SIZE);
  #prefaceLeft = PREFACE.length;
  #out = Buffer.alloc(0);
  #block: PendingBlock | undefined;
  /** Per inbound SETTINGS frame not yet acknowledged: its header table size, or undefined. */
  readonly #settings: (number | undefined)[] = [];
  #in = { header: Buffer.alloc(0), left: 0, type: 0, payload: undefined as Buffer[] | undefined };
  #faulted = false;

  readonly #onBlock: ((nghttp2Bytes: number, sentBytes: number) => void) | undefined;
  readonly #onFault: ((reason: string) => void) | undefined;

  /**
   * `onBlock`: told the size of every header block as nghttp2 made it and as sent (the byte counter).
   * `onFault`: told, before nghttp2 sees it, that this connection failed in a way the re-encoding
   * can cause (the server's COMPRESSION_ERROR, a GOAWAY naming the header block, a block of
   * nghttp2's this indexer could not read): the dispatcher falls back to nghttp2's own encoding.
   */
  constructor(tls: TLSSocket, options: HeaderIndexerOptions = {}) {
    super({ allowHalfOpen: true });
    this.#tls = tls;
    this.#onBlock = options.onBlock;
    this.#onFault = options.onFault;
    tls.on('data', (chunk: Buffer) => {
      try {
        this.#inbound(chunk);
      } catch (e) {
        this.destroy(e as Error);
        return;
      }
      if (!this.push(chunk)) tls.pause();
    });
    tls.on('end', () => this.push(null));
    tls.on('error', (err) => this.destroy(err));
    tls.on('close', () => {
      if (!this.destroyed) this.destroy();
    });
  }

  get remoteAddress(): string | undefined {
    return this.#tls.remoteAddress;
  }

  get remotePort(): number | undefined {
    return this.#tls.remotePort;
  }

  get remoteFamily(): string | undefined {
    return this.#tls.remoteFamily;
  }

  get localAddress(): string | undefined {
    return this.#tls.localAddress;
  }

  get localPort(): number | undefined {
    return this.#tls.localPort;
  }

  ref(): this {
    this.#tls.ref();
    return this;
  }

  unref(): this {
    this.#tls.unref();
    return this;
  }

  setNoDelay(noDelay?: boolean): this {
    this.#tls.setNoDelay(noDelay);
    return this;
  }

  setKeepAlive(enable?: boolean, delayMs?: number): this {
    this.#tls.setKeepAlive(enable, delayMs);
    return this;
  }

  override _read(): void {
    this.#tls.resume();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    let out: Buffer;
    try {
      out = this.#outbound(chunk);
    } catch (e) {
      this.#fault(`the header indexer could not re-encode a block (${(e as Error).message})`);
      callback(e as Error);
      return;
    }
    if (out.length === 0 || this.#tls.write(out)) callback();
    else this.#tls.once('drain', () => callback());
  }

  /**
   * nghttp2's frames of one flush arrive together (JSStreamSocket corks its writes): one TLS write,
   * so one TLS record of 22 B overhead instead of one per frame (a HEADERS and a DATA frame per event).
   */
  override _writev(chunks: { chunk: Buffer }[], callback: (error?: Error | null) => void): void {
    this._write(Buffer.concat(chunks.map((c) => c.chunk)), 'binary', callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.#tls.end();
    callback();
  }

  /**
   * The error now, 'close' a turn of the event loop later, as a TLS socket does (its handle closes
   * asynchronously). node:http2 sits on this stream through a JSStreamSocket and fails its streams
   * on the error; undici's 'close' listener re-queues the requests still running. A Duplex emits
   * both in one tick, so undici saw the close first and opened a new connection for a request that
   * then failed anyway (a connection the server cut cost a second, idle one).
   */
  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    this.#tls.destroy();
    const told = err !== null && this.listenerCount('error') > 0;
    if (told) this.emit('error', err);
    setImmediate(() => callback(told ? null : err));
  }

  /** nghttp2's bytes in, the bytes for the wire out (header blocks re-encoded, the rest as it was). */
  #outbound(chunk: Buffer): Buffer {
    const out: Buffer[] = [];
    let buf = this.#out.length > 0 ? Buffer.concat([this.#out, chunk]) : chunk;
    if (this.#prefaceLeft > 0) {
      const n = Math.min(this.#prefaceLeft, buf.length);
      const at = PREFACE.length - this.#prefaceLeft;
      if (!buf.subarray(0, n).equals(PREFACE.subarray(at, at + n))) throw new Error('h2 header indexer: no HTTP/2 client preface');
      out.push(buf.subarray(0, n));
      this.#prefaceLeft -= n;
      buf = buf.subarray(n);
    }
    while (buf.length >= FRAME_HEADER) {
      const length = buf.readUIntBE(0, 3);
      if (buf.length < FRAME_HEADER + length) break;
      const frame = buf.subarray(0, FRAME_HEADER + length);
      buf = buf.subarray(FRAME_HEADER + length);
      const type = frame[3]!;
      const flags = frame[4]!;
      const streamId = frame.readUInt32BE(5) & 0x7fff_ffff;
      const payload = frame.subarray(FRAME_HEADER);
      if (this.#block) {
        // RFC 9113 6.10: nothing may come between a HEADERS frame and its CONTINUATIONs.
        if (type !== CONTINUATION || streamId !== this.#block.streamId) throw new Error('h2 header indexer: header block interrupted');
        this.#block.fragments.push(payload);
        if (flags & END_HEADERS) out.push(this.#reencode());
      } else if (type === HEADERS) {
        let start = 0;
        let end = payload.length;
        if (flags & PADDED) {
          end -= payload[0]!;
          start = 1;
        }
        const priority = flags & PRIORITY ? Buffer.from(payload.subarray(start, start + 5)) : undefined;
        if (priority) start += 5;
        if (end < start) throw new Error('h2 header indexer: bad HEADERS padding');
        this.#block = { streamId, flags, priority, fragments: [payload.subarray(start, end)] };
        if (flags & END_HEADERS) out.push(this.#reencode());
      } else {
        // Our acknowledgement of the server's SETTINGS: from here the server's decoder holds the
        // table size it announced, and the next block must start with a size update (RFC 7541 4.2).
        if (type === SETTINGS && flags & ACK) {
          const size = this.#settings.shift();
          if (size !== undefined) this.#encoder.setMaxTableSize(Math.min(PREFERRED_TABLE_SIZE, size));
        }
        out.push(frame);
      }
    }
    // Keep what is left: it is nghttp2's buffer, and the next write continues it.
    this.#out = buf.length > 0 ? Buffer.from(buf) : Buffer.alloc(0);
    if (this.#block) {
      // Fragments point into `buf`'s memory, which is reused only through the copy above.
      this.#block.fragments = this.#block.fragments.map((f) => Buffer.from(f));
    }
    // A copy: nghttp2's buffer is its own again once this write completes.
    return Buffer.concat(out);
  }

  #reencode(): Buffer {
    const block = this.#block!;
    this.#block = undefined;
    const original = Buffer.concat(block.fragments);
    const fields = this.#decoder.decode(original).map((f) => this.#indexing(f));
    const encoded = this.#encoder.encode(fields);
    this.counts.blocks++;
    this.counts.bytesIn += original.length;
    this.counts.bytesOut += encoded.length;
    this.#onBlock?.(original.length, encoded.length);
    const frames: Buffer[] = [];
    const first = block.priority ? MAX_FRAME - block.priority.length : MAX_FRAME;
    let rest = encoded;
    let piece = rest.subarray(0, first);
    rest = rest.subarray(piece.length);
    let flags = (block.flags & (END_STREAM | PRIORITY)) | (rest.length === 0 ? END_HEADERS : 0);
    frames.push(frameHeader(piece.length + (block.priority?.length ?? 0), HEADERS, flags, block.streamId));
    if (block.priority) frames.push(block.priority);
    frames.push(piece);
    while (rest.length > 0) {
      piece = rest.subarray(0, MAX_FRAME);
      rest = rest.subarray(piece.length);
      flags = rest.length === 0 ? END_HEADERS : 0;
      frames.push(frameHeader(piece.length, CONTINUATION, flags, block.streamId), piece);
    }
    return Buffer.concat(frames);
  }

  /** How a field goes into the server's table (see the file comment for `authorization`). */
  #indexing(f: HeaderField): EncoderField {
    const { name, value } = f;
    if (f.representation === 'never' && name !== 'authorization') return { name, value, indexing: 'never' };
    // As nghttp2: an entry over three quarters of the table would evict everything else.
    if (VARYING.has(name) || entrySize(name, value) > (this.#encoder.table.maxSize * 3) / 4) return { name, value, indexing: 'literal' };
    return { name, value, indexing: 'index' };
  }

  /**
   * The server's frames, read for SETTINGS (the table size) and for GOAWAY and RST_STREAM (did it
   * refuse our header blocks?); the bytes themselves go to nghttp2 unchanged.
   */
  #inbound(chunk: Buffer): void {
    const s = this.#in;
    let pos = 0;
    while (pos < chunk.length) {
      if (s.left > 0) {
        const n = Math.min(s.left, chunk.length - pos);
        s.payload?.push(chunk.subarray(pos, pos + n));
        pos += n;
        s.left -= n;
        if (s.left === 0 && s.payload) this.#serverFrame(s.type, Buffer.concat(s.payload));
        continue;
      }
      const need = FRAME_HEADER - s.header.length;
      s.header = Buffer.concat([s.header, chunk.subarray(pos, pos + need)]);
      pos += Math.min(need, chunk.length - pos);
      if (s.header.length < FRAME_HEADER) break;
      const length = s.header.readUIntBE(0, 3);
      const type = s.header[3]!;
      const read = (type === SETTINGS && (s.header[4]! & ACK) === 0) || type === GOAWAY || type === RST_STREAM;
      s.header = Buffer.alloc(0);
      s.left = length;
      s.type = type;
      s.payload = read ? [] : undefined;
      if (read && length === 0) this.#serverFrame(type, Buffer.alloc(0));
    }
  }

  #serverFrame(type: number, payload: Buffer): void {
    this.#in.payload = undefined;
    if (type === SETTINGS) {
      let size: number | undefined;
      for (let i = 0; i + 6 <= payload.length; i += 6)
        if (payload.readUInt16BE(i) === SETTINGS_HEADER_TABLE_SIZE) size = payload.readUInt32BE(i + 2);
      this.#settings.push(size);
    } else if (type === RST_STREAM && payload.length >= 4 && payload.readUInt32BE(0) === COMPRESSION_ERROR) {
      // The server's table may now differ from the encoder's (RFC 7541 treats a decoding error as
      // the connection's): end it here, so that its requests go again on a fresh one.
      this.#fault('the server reset a stream with COMPRESSION_ERROR');
      throw new Error('h2 header indexer: the server reset a stream with COMPRESSION_ERROR; the connection is closed');
    } else if (type === GOAWAY && payload.length >= 8) {
      const code = payload.readUInt32BE(4);
      // The debug text is the server's and may quote a header: it is matched, never repeated.
      if (code === COMPRESSION_ERROR) this.#fault('the server sent GOAWAY COMPRESSION_ERROR');
      else if (code !== 0 && NAMES_HEADER_BLOCK.test(payload.subarray(8).toString('latin1')))
        this.#fault(`the server sent GOAWAY with error code ${code}, its debug text naming the header block`);
    }
  }

  #fault(reason: string): void {
    if (this.#faulted) return;
    this.#faulted = true;
    this.#onFault?.(reason);
  }
}

function frameHeader(length: number, type: number, flags: number, streamId: number): Buffer {
  const h = Buffer.alloc(FRAME_HEADER);
  h.writeUIntBE(length, 0, 3);
  h[3] = type;
  h[4] = flags;
  h.writeUInt32BE(streamId, 5);
  return h;
}
