/**
 * NMEA 0183 4.11 sentence text for the synthetic receiver. Field layouts follow the u-blox M9
 * interface description (NMEA 4.11 mode): RMC/GGA/VTG/ZDA with a GN talker for the combined
 * solution, one GSA per constellation ending in the system id, and GSV per constellation ending in
 * the signal id.
 */

/** XOR of every character between `$` and `*` (NMEA 0183 section 5.2.1), as two hex digits. */
export function checksum(body: string): string {
  let x = 0;
  for (let i = 0; i < body.length; i++) x ^= body.charCodeAt(i);
  return x.toString(16).toUpperCase().padStart(2, '0');
}

export function sentence(body: string): string {
  return `$${body}*${checksum(body)}`;
}

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/** hhmmss.ss from epoch ms (UTC). */
export function timeField(ms: number): string {
  const d = new Date(ms);
  const cs = Math.floor(d.getUTCMilliseconds() / 10);
  return `${pad(d.getUTCHours(), 2)}${pad(d.getUTCMinutes(), 2)}${pad(d.getUTCSeconds(), 2)}.${pad(cs, 2)}`;
}

export function dateField(ms: number): string {
  const d = new Date(ms);
  return `${pad(d.getUTCDate(), 2)}${pad(d.getUTCMonth() + 1, 2)}${pad(d.getUTCFullYear() % 100, 2)}`;
}

/** ddmm.mmmmm,N (5 decimals of minutes is ~2 cm, as u-blox prints in high-precision mode). */
export function latField(lat: number): string {
  const a = Math.abs(lat);
  const deg = Math.floor(a);
  const min = (a - deg) * 60;
  return `${pad(deg, 2)}${min.toFixed(5).padStart(8, '0')},${lat >= 0 ? 'N' : 'S'}`;
}

export function lonField(lon: number): string {
  const a = Math.abs(lon);
  const deg = Math.floor(a);
  const min = (a - deg) * 60;
  return `${pad(deg, 3)}${min.toFixed(5).padStart(8, '0')},${lon >= 0 ? 'E' : 'W'}`;
}

export const MPS_TO_KNOTS = 3600 / 1852;

export interface EpochFacts {
  timeMs: number;
  lat: number;
  lon: number;
  altMSL: number;
  speedMps: number;
  /** Course over ground; undefined while parked (receivers leave the field empty at rest). */
  track: number | undefined;
  hdop: number;
  pdop: number;
  vdop: number;
  satellitesUsed: number;
}

export function rmc(f: EpochFacts): string {
  const knots = (f.speedMps * MPS_TO_KNOTS).toFixed(3);
  const cog = f.track === undefined ? '' : f.track.toFixed(2);
  // Mode A (autonomous), navigational status V ("not provided", as u-blox sends it).
  return sentence(`GNRMC,${timeField(f.timeMs)},A,${latField(f.lat)},${lonField(f.lon)},${knots},${cog},${dateField(f.timeMs)},,,A,V`);
}

export function vtg(f: EpochFacts): string {
  const cog = f.track === undefined ? '' : f.track.toFixed(2);
  return sentence(`GNVTG,${cog},T,,M,${(f.speedMps * MPS_TO_KNOTS).toFixed(3)},N,${(f.speedMps * 3.6).toFixed(3)},K,A`);
}

/** Geoid separation of the Netherlands is about 46 m (EGM96). */
export function gga(f: EpochFacts): string {
  return sentence(
    `GNGGA,${timeField(f.timeMs)},${latField(f.lat)},${lonField(f.lon)},1,${pad(Math.min(f.satellitesUsed, 99), 2)},${f.hdop.toFixed(2)},${f.altMSL.toFixed(1)},M,46.0,M,,`,
  );
}

export function zda(timeMs: number): string {
  const d = new Date(timeMs);
  return sentence(`GNZDA,${timeField(timeMs)},${pad(d.getUTCDate(), 2)},${pad(d.getUTCMonth() + 1, 2)},${d.getUTCFullYear()},00,00`);
}

/** One GSA per constellation (NMEA 4.11): 12 id slots, PDOP, HDOP, VDOP, system id. */
export function gsa(usedIds: readonly number[], f: EpochFacts, systemId: number): string {
  const slots = Array.from({ length: 12 }, (_, i) => (usedIds[i] === undefined ? '' : pad(usedIds[i] ?? 0, 2)));
  return sentence(`GNGSA,A,3,${slots.join(',')},${f.pdop.toFixed(2)},${f.hdop.toFixed(2)},${f.vdop.toFixed(2)},${systemId}`);
}

export interface GsvEntry {
  id: number;
  elevation: number;
  azimuth: number;
  snr: number | undefined;
}

/** GSV for one constellation and signal: four satellites per message, signal id last (NMEA 4.10). */
export function gsv(talker: string, sats: readonly GsvEntry[], signalId: number): string[] {
  const total = Math.max(1, Math.ceil(sats.length / 4));
  const out: string[] = [];
  for (let m = 0; m < total; m++) {
    const group = sats
      .slice(m * 4, m * 4 + 4)
      .map(
        (s) =>
          `${pad(s.id, 2)},${pad(Math.round(s.elevation), 2)},${pad(Math.round(s.azimuth) % 360, 3)},${s.snr === undefined ? '' : pad(Math.round(s.snr), 2)}`,
      );
    out.push(
      sentence(
        `${talker}GSV,${total},${m + 1},${pad(sats.length, 2)}${group.length > 0 ? `,${group.join(',')}` : ''},${signalId.toString(16).toUpperCase()}`,
      ),
    );
  }
  return out;
}
