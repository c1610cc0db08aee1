import { readFileSync } from 'node:fs';
import { createDecoder, type DecoderOptions } from '../../../src/gnss/decoder.js';
import type { Fix } from '../../../src/fix/fix.js';

/** Decodes a whole log the way `nmea decode` does (raw bytes, latin1, line by line). */
export function decodeFile(file: string, options: DecoderOptions = {}): Fix[] {
  const decoder = createDecoder(options);
  const out: Fix[] = [];
  out.push(...decoder.pushChunk(readFileSync(file)));
  out.push(...decoder.flush());
  return out;
}
