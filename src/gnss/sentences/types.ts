/** Decoded sentences: only the fields the epoch stage uses, `undefined` where the receiver left them empty. */

interface Base {
  talker: string;
}

/** GGA: fix data. */
export interface GgaSentence extends Base {
  kind: 'GGA';
  timeOfDay?: number;
  lat?: number;
  lon?: number;
  quality?: number;
  satellitesUsed?: number;
  hdop?: number;
  altMSL?: number;
}

/** RMC: recommended minimum. `status` A or D = valid, anything else = warning. */
export interface RmcSentence extends Base {
  kind: 'RMC';
  timeOfDay?: number;
  status: string;
  lat?: number;
  lon?: number;
  speedKnots?: number;
  track?: number;
  /** Midnight UTC of the date, epoch ms. */
  date?: number;
  faaMode?: string;
}

/** GLL: position only. */
export interface GllSentence extends Base {
  kind: 'GLL';
  timeOfDay?: number;
  lat?: number;
  lon?: number;
  status: string;
  faaMode?: string;
}

/** GNS: multi-constellation fix data (NMEA 3.0+). `modes` has one letter per constellation. */
export interface GnsSentence extends Base {
  kind: 'GNS';
  timeOfDay?: number;
  lat?: number;
  lon?: number;
  modes: string;
  satellitesUsed?: number;
  hdop?: number;
  altMSL?: number;
  navStatus?: string;
}

/** GSA: DOPs and the satellites used; one per constellation in NMEA 4.x. */
export interface GsaSentence extends Base {
  kind: 'GSA';
  /** 1 no fix, 2 2D, 3 3D; undefined when empty or not a digit (Antaris sends 'E'). */
  fixType?: number;
  ids: number[];
  pdop?: number;
  hdop?: number;
  vdop?: number;
  /** NMEA 4.10 GNSS system id (1 GPS, 2 GLONASS, 3 Galileo, 4 BeiDou, 5 QZSS, 6 NavIC). */
  systemId?: number;
}

export interface GsvSatellite {
  id: number;
  elevation?: number;
  azimuth?: number;
  snr?: number;
}

/** GSV: satellites in view, in `total` parts. */
export interface GsvSentence extends Base {
  kind: 'GSV';
  total: number;
  part: number;
  inView?: number;
  satellites: GsvSatellite[];
  /** NMEA 4.10 signal id (the extra last field). */
  signalId?: number;
}

/** VTG: course and speed over ground. */
export interface VtgSentence extends Base {
  kind: 'VTG';
  track?: number;
  speedKnots?: number;
  speedKmh?: number;
  faaMode?: string;
}

/** ZDA: time and date with a four-digit year. */
export interface ZdaSentence extends Base {
  kind: 'ZDA';
  timeOfDay?: number;
  date?: number;
}

/**
 * Garmin PGRMZ: altitude in feet and fix dimension. Garmin 38/48-era units send their altitude
 * here (GLL-based cycles have no GGA); gpsd uses it the same way.
 */
export interface PgrmzSentence extends Base {
  kind: 'PGRMZ';
  altMSL?: number;
  /** 1 no fix, 2 2D (user altitude), 3 3D (GPS altitude). */
  dimension?: number;
}

export type Sentence =
  | PgrmzSentence
  | GgaSentence
  | RmcSentence
  | GllSentence
  | GnsSentence
  | GsaSentence
  | GsvSentence
  | VtgSentence
  | ZdaSentence;
export type SentenceKind = Sentence['kind'];
