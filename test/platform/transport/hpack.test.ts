import { describe, expect, it } from 'vitest';
import { HpackDecoder } from '../../../src/platform/transport/hpack/decoder.js';
import { HpackEncoder } from '../../../src/platform/transport/hpack/encoder.js';
import { CODES, huffmanDecode, huffmanEncode } from '../../../src/platform/transport/hpack/huffman.js';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

describe('HPACK Huffman code (RFC 7541 5.2, Appendix B)', () => {
  it('rebuilds the canonical codes of Appendix B from their lengths', () => {
    // A few values of Appendix B: octet 0, '0', ' ', 'a', 'z', octet 255 and EOS.
    expect(CODES[0]).toBe(0x1ff8);
    expect(CODES[0x30]).toBe(0x0);
    expect(CODES[0x20]).toBe(0x14);
    expect(CODES[0x61]).toBe(0x3);
    expect(CODES[0x7a]).toBe(0x7b);
    expect(CODES[0xff]).toBe(0x3ffffee);
    expect(CODES[256]).toBe(0x3fffffff);
  });

  it('encodes and decodes the examples of Appendix C.4', () => {
    for (const [text, coded] of [
      ['www.example.com', 'f1e3 c2e5 f23a 6ba0 ab90 f4ff'],
      ['no-cache', 'a8eb 1064 9cbf'],
      ['custom-key', '25a8 49e9 5ba9 7d7f'],
      ['custom-value', '25a8 49e9 5bb8 e8b4 bf'],
    ] as const) {
      expect(huffmanEncode(Buffer.from(text)).toString('hex')).toBe(hex(coded).toString('hex'));
      expect(huffmanDecode(hex(coded)).toString()).toBe(text);
    }
  });

  it('round-trips every octet, alone and together', () => {
    const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    expect(huffmanDecode(huffmanEncode(all)).equals(all)).toBe(true);
    for (let i = 0; i < 256; i++) expect(huffmanDecode(huffmanEncode(Buffer.of(i)))[0]).toBe(i);
  });

  it('refuses padding longer than 7 bits, padding that is not all ones, and EOS', () => {
    expect(() => huffmanDecode(hex('ff ff ff ff'))).toThrow(/EOS|padding/);
    // '0' is 00000: padded with zeros instead of ones.
    expect(() => huffmanDecode(Buffer.of(0x00))).toThrow(/padding/);
    expect(() => huffmanDecode(hex('07 ff'))).toThrow(/padding/);
  });
});

describe('HPACK decoder and encoder (RFC 7541 Appendix C)', () => {
  it('decodes the request examples of C.4 (Huffman) with their dynamic table', () => {
    const d = new HpackDecoder();
    const first = d.decode(hex('8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff'));
    expect(first.map((f) => [f.name, f.value])).toEqual([
      [':method', 'GET'],
      [':scheme', 'http'],
      [':path', '/'],
      [':authority', 'www.example.com'],
    ]);
    expect(d.table.size).toBe(57);
    const second = d.decode(hex('8286 84be 5886 a8eb 1064 9cbf'));
    expect(second.at(-1)).toMatchObject({ name: 'cache-control', value: 'no-cache', representation: 'incremental' });
    expect(second[3]).toMatchObject({ name: ':authority', value: 'www.example.com', representation: 'indexed' });
    const third = d.decode(hex('8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf'));
    expect(third.at(-1)).toMatchObject({ name: 'custom-key', value: 'custom-value' });
    expect(d.table.size).toBe(164);
  });

  it('tells never-indexed literals from the others (6.2.3)', () => {
    // C.2.3: a never-indexed literal with a new name.
    const d = new HpackDecoder();
    const [f] = d.decode(hex('1008 7061 7373 776f 7264 0673 6563 7265 74'));
    expect(f).toEqual({ name: 'password', value: 'secret', representation: 'never' });
    expect(d.table.length).toBe(0);
  });

  it('encodes what a decoder reads back, indexing what it is told to, and sends a repeat as one octet', () => {
    const e = new HpackEncoder();
    const d = new HpackDecoder();
    const bearer = `Bearer ${'x'.repeat(1290)}`;
    const fields = [
      { name: ':method', value: 'PUT', indexing: 'index' as const },
      { name: 'authorization', value: bearer, indexing: 'index' as const },
      { name: 'cookie', value: 'short', indexing: 'never' as const },
      { name: 'content-length', value: '312', indexing: 'literal' as const },
    ];
    const one = e.encode(fields);
    const two = e.encode(fields);
    for (const block of [one, two]) expect(d.decode(block).map((f) => [f.name, f.value])).toEqual(fields.map((f) => [f.name, f.value]));
    expect(d.decode(e.encode(fields))[1]!.representation).toBe('indexed');
    expect(two.length).toBeLessThan(20);
    expect(one.length).toBeGreaterThan(900);
    // The never-indexed field stays never-indexed however often it comes.
    expect(new HpackDecoder().decode(e.encode([fields[2]!]))[0]!.representation).toBe('never');
  });

  it('announces a smaller table first, then the last size (4.2), and indexes nothing at size 0', () => {
    const e = new HpackEncoder();
    const d = new HpackDecoder();
    d.decode(e.encode([{ name: 'x-a', value: '1', indexing: 'index' }]));
    e.setMaxTableSize(0);
    e.setMaxTableSize(100);
    const block = e.encode([{ name: 'x-b', value: '2', indexing: 'index' }]);
    expect(block[0]).toBe(0x20); // size update to 0
    d.decode(block);
    expect(d.table.maxSize).toBe(100);
    expect(d.table.length).toBe(1);
    e.setMaxTableSize(0);
    const zero = e.encode([{ name: 'authorization', value: 'Bearer abc', indexing: 'index' }]);
    const [f] = d.decode(zero);
    expect(f!.representation).toBe('without');
    expect(d.table.length).toBe(0);
  });

  it('refuses malformed blocks instead of guessing', () => {
    expect(() => new HpackDecoder().decode(Buffer.of(0x80))).toThrow(/index 0/);
    expect(() => new HpackDecoder().decode(Buffer.of(0xbe))).toThrow(/outside/);
    expect(() => new HpackDecoder().decode(Buffer.of(0x82, 0x20))).toThrow(/after a field/);
    expect(() => new HpackDecoder({ limit: 4096 }).decode(hex('3fe1 ff03'))).toThrow(/above the limit/);
    expect(() => new HpackDecoder().decode(hex('4005 6162'))).toThrow(/past the header block/);
  });
});
