/**
 * Bytes to lines, synchronously, with a bounded buffer. A run of bytes without a newline longer
 * than `maxLineLength` (a wrong baud rate, a receiver spewing binary) keeps only its last
 * `maxLineLength` bytes: the excess is dropped and counted, and the sentence that usually ends such
 * a run (after the noise) still gets through. Bytes are read as latin1 so that every byte stays
 * one character and the NMEA checksum is computed over the bytes received.
 */
import { CONFIG_DEFAULTS } from '../config/defaults.js';

export interface LineSplitterCounters {
  bytes: number;
  lines: number;
  /** Lines that exceeded the maximum length. */
  overlong: number;
  /** Bytes dropped from overlong lines. */
  droppedBytes: number;
}

export class LineSplitter {
  readonly counters: LineSplitterCounters = { bytes: 0, lines: 0, overlong: 0, droppedBytes: 0 };
  readonly #max: number;
  #partial = '';
  #partialOverlong = false;

  constructor(maxLineLength = CONFIG_DEFAULTS.gnss.maxLineLength) {
    if (!(maxLineLength >= 1)) throw new RangeError('maxLineLength must be at least 1');
    this.#max = maxLineLength;
  }

  /** Splits a chunk; calls `onLine` for each complete line (without CR/LF). */
  push(chunk: Uint8Array | string, onLine: (line: string) => void): void {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('latin1');
    this.counters.bytes += text.length;
    let start = 0;
    for (;;) {
      const nl = text.indexOf('\n', start);
      if (nl < 0) break;
      let line = text.slice(start, nl);
      if (this.#partial !== '' || this.#partialOverlong) {
        line = this.#partial + line;
        this.#partial = '';
      }
      this.#emit(line, this.#partialOverlong, onLine);
      this.#partialOverlong = false;
      start = nl + 1;
    }
    if (start < text.length) {
      const rest = start === 0 ? this.#partial + text : text.slice(start);
      if (rest.length > this.#max) {
        this.counters.droppedBytes += rest.length - this.#max;
        this.#partial = rest.slice(rest.length - this.#max);
        this.#partialOverlong = true;
      } else {
        this.#partial = rest;
      }
    }
  }

  /** The unterminated last line, if any (end of a file). */
  end(onLine: (line: string) => void): void {
    if (this.#partial !== '') this.#emit(this.#partial, this.#partialOverlong, onLine);
    this.#partial = '';
    this.#partialOverlong = false;
  }

  #emit(line: string, wasOverlong: boolean, onLine: (line: string) => void): void {
    let out = line;
    if (out.length > this.#max) {
      this.counters.droppedBytes += out.length - this.#max;
      out = out.slice(out.length - this.#max);
      wasOverlong = true;
    }
    if (wasOverlong) this.counters.overlong++;
    if (out.charCodeAt(out.length - 1) === 13) out = out.slice(0, -1);
    this.counters.lines++;
    onLine(out);
  }
}
