import { describe, expect, it } from 'vitest';
import { LineSplitter } from '../../src/gnss/line-splitter.js';

function split(chunks: (string | Buffer)[], max = 4096): { lines: string[]; splitter: LineSplitter } {
  const splitter = new LineSplitter(max);
  const lines: string[] = [];
  for (const c of chunks) splitter.push(c, (l) => lines.push(l));
  splitter.end((l) => lines.push(l));
  return { lines, splitter };
}

describe('LineSplitter', () => {
  const text = '$GPGGA,1*00\r\n$GPRMC,2*00\n\n$GPGSA,3*00\r\n$GPVTG,4';
  const expected = ['$GPGGA,1*00', '$GPRMC,2*00', '', '$GPGSA,3*00', '$GPVTG,4'];

  it('gives the same lines however the bytes are chunked', () => {
    for (let size = 1; size <= text.length; size++) {
      const chunks: Buffer[] = [];
      for (let i = 0; i < text.length; i += size) chunks.push(Buffer.from(text.slice(i, i + size), 'latin1'));
      expect(split(chunks).lines, `chunk size ${size}`).toEqual(expected);
    }
  });

  it('keeps every byte as one character (latin1), so checksums see the bytes received', () => {
    expect(split([Buffer.from([0x24, 0xff, 0x80, 0x0a])]).lines).toEqual(['$\u00ff\u0080']);
  });

  it('bounds a run without newline: keeps the tail, counts the excess', () => {
    const noise = 'x'.repeat(10_000);
    const { lines, splitter } = split([noise.slice(0, 3000), noise.slice(3000), '$GPGGA,1*00\nnext\n'], 100);
    expect(lines).toEqual([`${'x'.repeat(100 - 11)}$GPGGA,1*00`, 'next']);
    expect(splitter.counters.overlong).toBe(1);
    expect(splitter.counters.droppedBytes).toBe(10_011 - 100);
    expect(splitter.counters.lines).toBe(2);
  });

  it('bounds an overlong line that arrives in one chunk', () => {
    const { lines, splitter } = split([`${'y'.repeat(500)}\nok\n`], 64);
    expect(lines[0]).toHaveLength(64);
    expect(lines[1]).toBe('ok');
    expect(splitter.counters.overlong).toBe(1);
  });
});
