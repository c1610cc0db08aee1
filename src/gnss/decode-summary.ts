/**
 * What `nmea decode` says on stderr at the end: how much it read, and when no fix came out, why
 * (an empty input, no NMEA at all, sentences without a date, a log cut before its first epoch
 * ended). Built from the decoder's counters only.
 */
import type { DecoderCounters } from './decoder.js';

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** Sentences that carry the time of day; RMC and ZDA also carry the date. */
const TIMED = ['GGA', 'GLL', 'GNS', 'RMC', 'ZDA'] as const;
const DATED = ['RMC', 'ZDA'] as const;

export function decodeSummary(c: DecoderCounters): string {
  const decoded = c.sentences.decoded as Record<string, number | undefined>;
  const used = Object.values(decoded).reduce<number>((s, n) => s + (n ?? 0), 0);
  const read = `read ${plural(c.lines.lines, 'line')} (${plural(used, 'NMEA sentence')} used), ${plural(c.epochs.epochs, 'fix', 'fixes')}`;
  if (c.epochs.epochs > 0) return read;
  return `${read}: ${whyNoFix(c, decoded, used)}`;
}

function whyNoFix(c: DecoderCounters, decoded: Record<string, number | undefined>, used: number): string {
  if (c.lines.lines === 0) return 'the input was empty';
  if (used === 0) {
    const rejected = Object.entries(c.sentences.rejected)
      .filter(([, n]) => (n ?? 0) > 0)
      .map(([why, n]) => `${why} ${n}`)
      .join(', ');
    const other = c.sentences.unknown + c.sentences.proprietary + c.sentences.malformed;
    if (other > 0)
      return `no sentence this decoder uses (${plural(other, 'unknown, proprietary or malformed sentence')}${rejected ? `; not NMEA: ${rejected}` : ''})`;
    return `no NMEA in the input${rejected ? ` (${rejected})` : ''}: is it an NMEA log? A receiver at the wrong baud rate or speaking a binary protocol looks like this`;
  }
  const has = (kinds: readonly string[]): boolean => kinds.some((k) => (decoded[k] ?? 0) > 0);
  if (!has(TIMED)) return 'no sentence carries a time (only satellite and DOP sentences such as GSA and GSV), so no fix can be timed';
  if (!has(DATED))
    return 'no RMC or ZDA sentence, so no date: GGA, GLL and GNS carry only the time of day, and a fix is never given a guessed date';
  if (c.epochs.undated > 0) return `${plural(c.epochs.undated, 'epoch')} came before the first date (RMC or ZDA) and were dropped`;
  if (c.epochs.truncated > 0) return 'the only epoch was cut off by the end of the input (nothing says it was complete)';
  return 'no complete epoch';
}
