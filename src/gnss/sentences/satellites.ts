/** Decoders for GSA (satellites used, DOPs) and GSV (satellites in view). */
import { uint } from './fields.js';
import { dop } from './position.js';
import type { GsaSentence, GsvSatellite, GsvSentence } from './types.js';

/**
 * GSA: `sel,fix,id1..id12,pdop,hdop,vdop[,systemId]`. NMEA 4.10 appends the GNSS system id
 * (nmea-simple reads it as a DOP); the NAVIOR-24 CH-4701 sends 24 ids, so the DOPs are taken
 * from the end of the sentence, not from fixed positions.
 */
export function decodeGsa(talker: string, f: string[]): GsaSentence | undefined {
  const count = f.length;
  if (count < 18) return undefined; // "$GPGSA,A,1,,,,*32" (i.Trek M3): malformed, as gpsd treats it.
  const hasSystemId = count === 19;
  const dopAt = hasSystemId ? 15 : count - 3;
  const ids: number[] = [];
  for (let i = 3; i < dopAt; i++) {
    const id = uint(f[i]);
    if (id !== undefined && id > 0) ids.push(id);
  }
  const fix = uint(f[2]);
  return {
    kind: 'GSA',
    talker,
    fixType: fix !== undefined && fix >= 1 && fix <= 3 ? fix : undefined,
    ids,
    pdop: dop(f[dopAt]),
    hdop: dop(f[dopAt + 1]),
    vdop: dop(f[dopAt + 2]),
    systemId: hasSystemId ? uint(f[18]) : undefined,
  };
}

/**
 * GSV: `total,part,inView,{id,elev,azim,snr}x1..4[,signalId]`. Field count modulo 4 tells whether
 * the NMEA 4.10 signal id is there (gpsd's rule; nmea-simple takes it for a satellite).
 */
export function decodeGsv(talker: string, f: string[]): GsvSentence | undefined {
  const count = f.length;
  if (count < 4) return undefined;
  const rest = count % 4;
  if (rest !== 0 && rest !== 1) return undefined;
  const total = uint(f[1]);
  const part = uint(f[2]);
  if (total === undefined || part === undefined || part < 1 || part > total || total > 32) return undefined;
  const satellites: GsvSatellite[] = [];
  const end = count - rest;
  for (let i = 4; i + 3 < end + 3 && i < end; i += 4) {
    const id = uint(f[i]);
    if (id === undefined || id === 0) continue;
    const elevation = uint(f[i + 1]);
    const azimuth = uint(f[i + 2]);
    const snr = uint(f[i + 3]);
    satellites.push({
      id,
      elevation: elevation !== undefined && elevation <= 90 ? elevation : undefined,
      azimuth: azimuth !== undefined && azimuth < 360 ? azimuth : undefined,
      snr: snr !== undefined && snr <= 99 ? snr : undefined,
    });
  }
  return { kind: 'GSV', talker, total, part, inView: uint(f[3]), satellites, signalId: rest === 1 ? uint(f[count - 1]) : undefined };
}
