/**
 * Stage 2a: from a raw line to a checked frame (talker, sentence type, fields).
 *
 * - The sentence starts at the last `$` of the line: binary noise at power-up, a stray byte before
 *   `$`, and the `$$` prefix some receivers send are all skipped that way (`$` may not appear
 *   inside a sentence, NMEA 0183 section 5.1.3).
 * - A checksum, when present, must match (bad: rejected and counted). When absent the sentence is
 *   accepted: old receivers (e.g. the Garmin 48, the Oncore GT+) send none.
 * - Only printable ASCII is allowed between `$` and `*` (NMEA 0183 section 5.1.1).
 */

export type FrameRejection = 'empty' | 'comment' | 'noStart' | 'badChecksum' | 'badCharacter' | 'badTag';

export interface Frame {
  /** Two-letter talker (GP, GN, ...) or 'P' for proprietary sentences. */
  talker: string;
  /** Sentence type after the talker: 'GGA', 'RMC', ... ; for proprietary sentences the vendor tag. */
  type: string;
  /** All comma-separated fields, fields[0] being the tag (talker + type), as gpsd counts them. */
  fields: string[];
  checksum: boolean;
}

export type FrameResult = Frame | FrameRejection;

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 65 && c <= 70) return c - 55;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

/** Proprietary sentences whose second and third letters name a GNSS talker (Quectel's PQGSV/PQGSA). */
const PROPRIETARY_TALKERS = new Set(['PQGSV', 'PQGSA']);

export function frameSentence(line: string): FrameResult {
  let end = line.length;
  while (end > 0 && line.charCodeAt(end - 1) <= 32) end--;
  if (end === 0) return 'empty';
  const start = line.lastIndexOf('$', end - 1);
  if (start < 0) return line.charCodeAt(0) === 35 /* # */ ? 'comment' : 'noStart';

  // A checksum is the `*` followed by exactly two hex digits at the end of the line.
  let bodyEnd = end;
  let expected = -1;
  if (end - start >= 4 && line.charCodeAt(end - 3) === 42 /* * */) {
    const hi = hexValue(line.charCodeAt(end - 2));
    const lo = hexValue(line.charCodeAt(end - 1));
    if (hi < 0 || lo < 0) return 'badChecksum';
    expected = hi * 16 + lo;
    bodyEnd = end - 3;
  }
  // One pass computes the checksum, checks the characters and cuts the fields (String.split
  // costs about twice as much on the hot path, bench/nmea.ts).
  let sum = 0;
  const fields: string[] = [];
  let fieldStart = start + 1;
  for (let i = start + 1; i < bodyEnd; i++) {
    const c = line.charCodeAt(i);
    // A `*` anywhere else means a truncated or mangled checksum.
    if (c < 32 || c > 126 || c === 42) return c === 42 ? 'badChecksum' : 'badCharacter';
    sum ^= c;
    if (c === 44 /* , */) {
      fields.push(line.substring(fieldStart, i));
      fieldStart = i + 1;
    }
  }
  if (expected >= 0 && sum !== expected) return 'badChecksum';
  fields.push(line.substring(fieldStart, bodyEnd));

  const tag = fields[0] ?? '';
  if (tag.length < 3 || tag.length > 10) return 'badTag';
  for (let i = 0; i < tag.length; i++) {
    const c = tag.charCodeAt(i);
    if (!((c >= 65 && c <= 90) || (c >= 48 && c <= 57))) return 'badTag';
  }
  if (tag.charCodeAt(0) === 80 /* P */ && !PROPRIETARY_TALKERS.has(tag)) {
    return { talker: 'P', type: tag.slice(1), fields, checksum: expected >= 0 };
  }
  return { talker: tag.slice(0, 2), type: tag.slice(2), fields, checksum: expected >= 0 };
}
