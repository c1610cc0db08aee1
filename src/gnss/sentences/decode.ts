/**
 * Stage 2b: from a checked frame to a decoded sentence.
 *
 * Why the eight sentences that make a fix are decoded here and not by nmea-simple (3.3.0):
 * its defects would reach the fix, and working around them would cost more than decoding:
 * - RMC: the time is parsed without its milliseconds, so the epochs of a 5 or 10 Hz receiver merge;
 * - empty fields become 0 or -0 (an unknown altitude reads as sea level, an unknown course as north);
 * - GGA, GNS and GLL times are stamped with the host's date (wrong at midnight, and useless for
 *   a replayed log), where NMEA carries the date in RMC/ZDA only;
 * - GSV: the NMEA 4.10 signal id is taken for a satellite; GSA: the 4.10 system id for a DOP;
 * - a short DTM throws a TypeError and every unknown or proprietary sentence throws.
 * It is also about three times slower than a split-and-index decoder on the corpus (bench/nmea.ts),
 * and the pipeline must keep up with 10 Hz multi-constellation receivers on small CPUs.
 * nmea-simple stays the reference for the fields it gets right: test/gnss/sentences.test.ts
 * decodes the whole corpus with both and compares them, and the benchmark measures against it.
 *
 * Of the proprietary sentences only Garmin's PGRMZ (altitude) is used, as gpsd does.
 * Other sentence types (GST, HDT, TXT, proprietary ...) carry nothing a fix needs: they are counted
 * and ignored, never thrown.
 */
import type { Frame } from './frame.js';
import { decodeGga, decodeGll, decodeGns, decodePgrmz, decodeRmc, decodeVtg, decodeZda } from './position.js';
import { decodeGsa, decodeGsv } from './satellites.js';
import type { Sentence } from './types.js';

export type DecodeResult = Sentence | 'unknown' | 'proprietary' | 'malformed';

export function decodeFrame(frame: Frame): DecodeResult {
  if (frame.talker === 'P') return frame.type === 'GRMZ' && frame.fields.length >= 4 ? decodePgrmz(frame.fields) : 'proprietary';
  const f = frame.fields;
  switch (frame.type) {
    case 'GGA':
      return f.length >= 10 ? decodeGga(frame.talker, f) : 'malformed';
    case 'RMC':
      return f.length >= 10 ? decodeRmc(frame.talker, f) : 'malformed';
    case 'GLL':
      return f.length >= 7 ? decodeGll(frame.talker, f) : 'malformed';
    case 'GNS':
      return f.length >= 10 ? decodeGns(frame.talker, f) : 'malformed';
    case 'VTG':
      return f.length >= 5 ? decodeVtg(frame.talker, f) : 'malformed';
    case 'ZDA':
      return f.length >= 5 ? decodeZda(frame.talker, f) : 'malformed';
    case 'GSA':
      return decodeGsa(frame.talker, f) ?? 'malformed';
    case 'GSV':
      return decodeGsv(frame.talker, f) ?? 'malformed';
    default:
      return 'unknown';
  }
}
