/**
 * Talker ids to constellations. Receivers use both the NMEA 4.11 ids and older or vendor ones:
 * BD and GB are both BeiDou, QZ and GQ both QZSS, and Quectel modules send BeiDou as `PQ` (gpsd's
 * `nmeaid_to_prn` documents the same quirks). GN is a combined solution: its satellites are told
 * apart by id range or by the NMEA 4.10 system id.
 */

export type Constellation = 'GPS' | 'GLONASS' | 'Galileo' | 'BeiDou' | 'QZSS' | 'NavIC' | 'SBAS' | 'unknown';

const BY_TALKER: Record<string, Constellation> = {
  GP: 'GPS',
  GL: 'GLONASS',
  GA: 'Galileo',
  GB: 'BeiDou',
  BD: 'BeiDou',
  PQ: 'BeiDou',
  GQ: 'QZSS',
  QZ: 'QZSS',
  GI: 'NavIC',
};

/** The constellation a talker id stands for, or undefined for GN and non-GNSS talkers. */
export function talkerConstellation(talker: string): Constellation | undefined {
  return BY_TALKER[talker];
}

/** NMEA 4.10 GSA/GSV system id (the last field) to a constellation. */
export function systemIdConstellation(systemId: number | undefined): Constellation | undefined {
  switch (systemId) {
    case 1:
      return 'GPS';
    case 2:
      return 'GLONASS';
    case 3:
      return 'Galileo';
    case 4:
      return 'BeiDou';
    case 5:
      return 'QZSS';
    case 6:
      return 'NavIC';
    default:
      return undefined;
  }
}

/**
 * The constellation of a satellite id when the talker does not say (GN, or GP carrying SBAS):
 * the NMEA 2.x-4.0 id ranges, plus the vendor ranges gpsd accepts (BeiDou 201-237, Galileo 301-336).
 */
export function idConstellation(id: number): Constellation {
  if (id >= 1 && id <= 32) return 'GPS';
  if (id <= 64) return 'SBAS';
  if (id <= 96) return 'GLONASS';
  if (id >= 120 && id <= 158) return 'SBAS';
  if (id >= 193 && id <= 199) return 'QZSS';
  if (id >= 201 && id <= 237) return 'BeiDou';
  if (id >= 301 && id <= 336) return 'Galileo';
  if (id >= 401 && id <= 437) return 'BeiDou';
  return 'unknown';
}

/** The constellation of one satellite, from the most specific evidence available. */
export function satelliteConstellation(talker: string, systemId: number | undefined, id: number): Constellation {
  const bySystem = systemIdConstellation(systemId);
  if (bySystem) return bySystem;
  const byTalker = talkerConstellation(talker);
  // GP also carries SBAS (33-64, 120-158) and QZSS (193-199) in NMEA 2.x-4.0.
  if (byTalker && byTalker !== 'GPS') return byTalker;
  return idConstellation(id);
}
