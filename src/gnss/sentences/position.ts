/** Decoders for the sentences that carry a position, time or date: GGA, RMC, GLL, GNS, VTG, ZDA. */
import { ddmmyy, latitude, longitude, num, timeOfDay, uint, utcDate } from './fields.js';
import type { GgaSentence, GllSentence, GnsSentence, PgrmzSentence, RmcSentence, VtgSentence, ZdaSentence } from './types.js';

/** DOPs of 99 and above mean "invalid" on BT-451 and others (gpsd does the same). */
export function dop(s: string | undefined): number | undefined {
  const v = num(s);
  return v === undefined || v < 0 || v >= 99 ? undefined : v;
}

export function decodeGga(talker: string, f: string[]): GgaSentence {
  return {
    kind: 'GGA',
    talker,
    timeOfDay: timeOfDay(f[1]),
    lat: latitude(f[2], f[3]),
    lon: longitude(f[4], f[5]),
    quality: uint(f[6]),
    satellitesUsed: uint(f[7]),
    hdop: dop(f[8]),
    altMSL: num(f[9]),
  };
}

export function decodeRmc(talker: string, f: string[]): RmcSentence {
  return {
    kind: 'RMC',
    talker,
    timeOfDay: timeOfDay(f[1]),
    status: f[2] ?? '',
    lat: latitude(f[3], f[4]),
    lon: longitude(f[5], f[6]),
    speedKnots: nonNegative(num(f[7])),
    track: num(f[8]),
    date: ddmmyy(f[9]),
    faaMode: f[12] || undefined,
  };
}

export function decodeGll(talker: string, f: string[]): GllSentence {
  return {
    kind: 'GLL',
    talker,
    lat: latitude(f[1], f[2]),
    lon: longitude(f[3], f[4]),
    timeOfDay: timeOfDay(f[5]),
    status: f[6] ?? '',
    faaMode: f[7] || undefined,
  };
}

export function decodeGns(talker: string, f: string[]): GnsSentence {
  return {
    kind: 'GNS',
    talker,
    timeOfDay: timeOfDay(f[1]),
    lat: latitude(f[2], f[3]),
    lon: longitude(f[4], f[5]),
    modes: f[6] ?? '',
    satellitesUsed: uint(f[7]),
    hdop: dop(f[8]),
    altMSL: num(f[9]),
    navStatus: f[13] || undefined,
  };
}

/**
 * VTG. NMEA 2.x+: `track,T,mag,M,knots,N,kmh,K[,mode]`; NMEA 1.x had no unit letters:
 * `track,mag,knots,kmh`.
 */
export function decodeVtg(talker: string, f: string[]): VtgSentence {
  if (f[2] === 'T' || f.length > 6) {
    return {
      kind: 'VTG',
      talker,
      track: num(f[1]),
      speedKnots: nonNegative(num(f[5])),
      speedKmh: nonNegative(num(f[7])),
      faaMode: f[9] || undefined,
    };
  }
  return { kind: 'VTG', talker, track: num(f[1]), speedKnots: nonNegative(num(f[3])), speedKmh: nonNegative(num(f[4])) };
}

/** ZDA: `hhmmss.ss,dd,mm,yyyy,zh,zm`; the year has four digits, so no century guess is needed. */
export function decodeZda(talker: string, f: string[]): ZdaSentence {
  const day = uint(f[2]);
  const month = uint(f[3]);
  const year = uint(f[4]);
  const date =
    day !== undefined && month !== undefined && year !== undefined && year >= 1980 && year < 2200 ? utcDate(year, month, day) : undefined;
  return { kind: 'ZDA', talker, timeOfDay: timeOfDay(f[1]), date };
}

function nonNegative(v: number | undefined): number | undefined {
  return v === undefined || v < 0 ? undefined : v;
}

const FEET_TO_METRES = 0.3048;

/** PGRMZ: `altitude,unit(f|m),dimension`. */
export function decodePgrmz(f: string[]): PgrmzSentence {
  const alt = num(f[1]);
  const unit = f[2];
  const dim = uint(f[3]);
  return {
    kind: 'PGRMZ',
    talker: 'P',
    altMSL: alt === undefined ? undefined : unit === 'f' ? alt * FEET_TO_METRES : unit === 'm' ? alt : undefined,
    dimension: dim !== undefined && dim >= 1 && dim <= 3 ? dim : undefined,
  };
}
