/**
 * HPACK's Huffman code (RFC 7541 section 5.2 and Appendix B).
 *
 * The code of Appendix B is canonical: codes of one length are consecutive in symbol order, and
 * each length continues where the shorter ones ended. So the table is its 257 code lengths (256
 * octets and EOS) and the codes are rebuilt from them. huffman.test.ts checks the rebuilt codes
 * against values of Appendix B and against nghttp2 (Node's HTTP/2), both ways, for every octet.
 */

// prettier-ignore
const LENGTHS: readonly number[] = [
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28,
  28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,
   6, 10, 10, 12, 13,  6,  8, 11, 10, 10,  8, 11,  8,  6,  6,  6,
   5,  5,  5,  6,  6,  6,  6,  6,  6,  6,  7,  8, 15,  6, 12, 10,
  13,  6,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,
   7,  7,  7,  7,  7,  7,  7,  7,  8,  7,  8, 13, 19, 13, 14,  6,
  15,  5,  6,  5,  6,  5,  6,  6,  6,  5,  7,  7,  6,  6,  6,  5,
   6,  7,  6,  5,  5,  6,  7,  7,  7,  7,  7, 15, 11, 14, 13, 28,
  20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23,
  24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24,
  22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23,
  21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,
  26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25,
  19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,
  20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23,
  26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,
  30, // EOS
];

const EOS = 256;

/** The code of each symbol (right-aligned in `length` bits). */
export const CODES: readonly number[] = (() => {
  const order = LENGTHS.map((len, sym) => ({ len, sym })).sort((a, b) => a.len - b.len || a.sym - b.sym);
  const codes = new Array<number>(LENGTHS.length).fill(0);
  let code = 0;
  let len = order[0]!.len;
  for (const e of order) {
    code *= 2 ** (e.len - len);
    len = e.len;
    codes[e.sym] = code;
    code++;
  }
  return codes;
})();

/**
 * Decoding tree as flat arrays: node n's children are child[2n] and child[2n+1]; a leaf is stored
 * as -(symbol + 1).
 */
const TREE: Int32Array = (() => {
  const child = new Int32Array(2 * 2 * LENGTHS.length).fill(0);
  let nodes = 1;
  for (let sym = 0; sym < LENGTHS.length; sym++) {
    const len = LENGTHS[sym]!;
    const code = CODES[sym]!;
    let node = 0;
    for (let i = len - 1; i >= 0; i--) {
      const bit = Math.floor(code / 2 ** i) % 2;
      const slot = 2 * node + bit;
      if (i === 0) child[slot] = -(sym + 1);
      else {
        if (child[slot] === 0) child[slot] = nodes++;
        node = child[slot]!;
      }
    }
  }
  return child;
})();

/** Bytes `data` takes Huffman-coded. */
export function huffmanLength(data: Uint8Array): number {
  let bits = 0;
  for (const b of data) bits += LENGTHS[b]!;
  return Math.ceil(bits / 8);
}

export function huffmanEncode(data: Uint8Array): Buffer {
  const out = Buffer.alloc(huffmanLength(data));
  let acc = 0;
  let bits = 0;
  let pos = 0;
  for (const b of data) {
    const len = LENGTHS[b]!;
    const code = CODES[b]!;
    // Feed at most 8 bits at a time so that `acc` stays well inside a double's exact integers.
    for (let left = len; left > 0; ) {
      const take = Math.min(8, left);
      left -= take;
      acc = acc * 2 ** take + (Math.floor(code / 2 ** left) % 2 ** take);
      bits += take;
      while (bits >= 8) {
        bits -= 8;
        out[pos++] = Math.floor(acc / 2 ** bits) & 0xff;
        acc %= 2 ** bits;
      }
    }
  }
  // Padding: the most significant bits of EOS (all ones).
  if (bits > 0) out[pos++] = ((acc << (8 - bits)) | (0xff >> bits)) & 0xff;
  return out;
}

/** Decodes a Huffman-coded string; throws on EOS, a bad code or bad padding (RFC 7541 5.2). */
export function huffmanDecode(data: Uint8Array): Buffer {
  const out: number[] = [];
  let node = 0;
  /** Bits read since the last complete symbol, and whether all of them were ones. */
  let depth = 0;
  let allOnes = true;
  for (const byte of data) {
    for (let i = 7; i >= 0; i--) {
      const bit = (byte >> i) & 1;
      const next = TREE[2 * node + bit]!;
      depth++;
      allOnes &&= bit === 1;
      if (next < 0) {
        const sym = -next - 1;
        if (sym === EOS) throw new Error('HPACK: EOS in a Huffman string');
        out.push(sym);
        node = 0;
        depth = 0;
        allOnes = true;
      } else if (next === 0) throw new Error('HPACK: invalid Huffman code');
      else node = next;
    }
  }
  if (depth > 7 || !allOnes) throw new Error('HPACK: invalid Huffman padding');
  return Buffer.from(out);
}
