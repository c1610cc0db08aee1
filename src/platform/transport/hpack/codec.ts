/**
 * HPACK's primitive representations (RFC 7541 section 5): prefixed integers and string literals,
 * Huffman-coded or raw. Strings are latin1 (one character per octet).
 */
import { huffmanDecode, huffmanEncode, huffmanLength } from './huffman.js';

/** Largest integer accepted when decoding: far above any table index or header size here. */
const MAX_INT = 2 ** 24;

export class HpackError extends Error {
  constructor(message: string) {
    super(`HPACK: ${message}`);
    this.name = 'HpackError';
  }
}

/** A cursor over one header block. */
export class Reader {
  pos = 0;
  constructor(readonly buf: Buffer) {}

  get done(): boolean {
    return this.pos >= this.buf.length;
  }

  peek(): number {
    if (this.done) throw new HpackError('header block ends inside a field');
    return this.buf[this.pos]!;
  }

  /** An integer with an N-bit prefix (5.1); the first octet's other bits are the caller's. */
  int(prefixBits: number): number {
    const mask = (1 << prefixBits) - 1;
    let value = this.peek() & mask;
    this.pos++;
    if (value < mask) return value;
    for (let shift = 0; ; shift += 7) {
      const b = this.peek();
      this.pos++;
      value += (b & 0x7f) * 2 ** shift;
      if (value > MAX_INT) throw new HpackError('integer too large');
      if ((b & 0x80) === 0) return value;
    }
  }

  /** A string literal (5.2). */
  string(): string {
    const huffman = (this.peek() & 0x80) !== 0;
    const len = this.int(7);
    if (this.pos + len > this.buf.length) throw new HpackError('string literal runs past the header block');
    const raw = this.buf.subarray(this.pos, this.pos + len);
    this.pos += len;
    try {
      return (huffman ? huffmanDecode(raw) : raw).toString('latin1');
    } catch (e) {
      throw new HpackError((e as Error).message);
    }
  }
}

/** Appends representations to a growing list of chunks. */
export class Writer {
  readonly #chunks: Buffer[] = [];

  /** An integer with an N-bit prefix; `first`: the high bits of the first octet. */
  int(value: number, prefixBits: number, first: number): void {
    const mask = (1 << prefixBits) - 1;
    if (value < mask) {
      this.#chunks.push(Buffer.of(first | value));
      return;
    }
    const out = [first | mask];
    let rest = value - mask;
    while (rest >= 0x80) {
      out.push(rest % 0x80 | 0x80);
      rest = Math.floor(rest / 0x80);
    }
    out.push(rest);
    this.#chunks.push(Buffer.from(out));
  }

  /** A string literal, Huffman-coded when that is shorter (as nghttp2 decides too). */
  string(s: string): void {
    const raw = Buffer.from(s, 'latin1');
    if (huffmanLength(raw) < raw.length) {
      const coded = huffmanEncode(raw);
      this.int(coded.length, 7, 0x80);
      this.#chunks.push(coded);
    } else {
      this.int(raw.length, 7, 0);
      this.#chunks.push(raw);
    }
  }

  toBuffer(): Buffer {
    return Buffer.concat(this.#chunks);
  }
}
