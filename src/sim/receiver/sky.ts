/**
 * The satellites the synthetic receiver sees: GPS, GLONASS, Galileo and BeiDou, each satellite on
 * a slowly moving track (a few tenths of a degree a minute, as MEO satellites move across the sky)
 * with a C/N0 that grows with elevation. A satellite is used in the solution above 10 degrees with
 * C/N0 of at least 28 dB-Hz, as u-blox's default masks do.
 */
import type { Random } from '../random.js';

export interface SkyConstellation {
  name: 'GPS' | 'GLONASS' | 'Galileo' | 'BeiDou';
  /** GSV talker (NMEA 4.11). */
  talker: 'GP' | 'GL' | 'GA' | 'GB';
  /** NMEA 4.11 GSA system id. */
  systemId: number;
  /** NMEA 4.11 GSV signal id of the L1/E1/B1 signal tracked. */
  signalId: number;
  /** The NMEA satellite numbers this constellation uses. */
  ids: readonly number[];
  /** How many are above the horizon at once. */
  visible: number;
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

export const CONSTELLATIONS: readonly SkyConstellation[] = [
  { name: 'GPS', talker: 'GP', systemId: 1, signalId: 1, ids: range(1, 32), visible: 10 },
  { name: 'GLONASS', talker: 'GL', systemId: 2, signalId: 1, ids: range(65, 88), visible: 7 },
  { name: 'Galileo', talker: 'GA', systemId: 3, signalId: 7, ids: range(1, 36), visible: 8 },
  { name: 'BeiDou', talker: 'GB', systemId: 4, signalId: 1, ids: range(1, 37), visible: 6 },
];

export interface SkySatellite {
  constellation: SkyConstellation;
  id: number;
  elevation: number;
  azimuth: number;
  snr: number | undefined;
  used: boolean;
}

interface Track {
  constellation: SkyConstellation;
  id: number;
  elevation0: number;
  azimuth0: number;
  /** Degrees per second. */
  elevationRate: number;
  azimuthRate: number;
  snrOffset: number;
}

export class SyntheticSky {
  readonly #tracks: Track[] = [];
  readonly #random: Random;

  constructor(random: Random) {
    this.#random = random;
    for (const c of CONSTELLATIONS) {
      const ids = [...c.ids];
      for (let i = 0; i < c.visible; i++) {
        const pick = ids.splice(Math.floor(random() * ids.length), 1)[0] ?? c.ids[0] ?? 1;
        this.#tracks.push({
          constellation: c,
          id: pick,
          elevation0: 5 + random() * 80,
          azimuth0: random() * 360,
          elevationRate: (random() - 0.5) * 0.012,
          azimuthRate: (random() - 0.5) * 0.016,
          snrOffset: (random() - 0.5) * 6,
        });
      }
    }
  }

  /** The sky `t` seconds into the drive; `shade` (0..1) lowers C/N0 (buildings in town). */
  at(t: number, shade: number): SkySatellite[] {
    return this.#tracks.map((tr) => {
      const elevation = Math.min(89, Math.max(1, tr.elevation0 + tr.elevationRate * t));
      const azimuth = (((tr.azimuth0 + tr.azimuthRate * t) % 360) + 360) % 360;
      const raw = 24 + elevation * 0.28 + tr.snrOffset - shade * 8 + (this.#random() - 0.5) * 2;
      const snr = raw < 12 ? undefined : Math.min(52, raw);
      const used = elevation >= 10 && snr !== undefined && snr >= 28;
      return { constellation: tr.constellation, id: tr.id, elevation, azimuth, snr, used };
    });
  }
}
