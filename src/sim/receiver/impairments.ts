/**
 * What happens to the synthetic receiver's sky besides the buildings of its route: the antenna's
 * state (as a u-blox prints it in TXT notices) and the knobs the receiver-health bench and tests
 * turn. Cover takes satellites by where they are in the sky; interference lowers every one alike.
 * - tunnel: every satellite gone within a second at the portal, back at the exit;
 * - canyon: satellites low (< 35 degrees) and across the street lose 10-25 dB, the rest stay;
 * - car park: down the ramp over 10 s the roof takes the high satellites first, then the walls
 *   the low ones (up to 40 dB), and back the same way out;
 * - fade: every satellite loses 0.4 dB a second (wet snow on the antenna, dense foliage);
 * - interference: a jammer in the cab, every signal `db` lower within a second;
 * - antenna OPEN or SHORT: nothing tracked, and the notice.
 */
import type { SkySatellite } from './sky.js';

export type AntennaWord = 'OK' | 'OPEN' | 'SHORT';

export type Impairment =
  | { kind: 'tunnel' | 'car park' | 'fade'; fromS: number; toS: number }
  | { kind: 'canyon'; fromS: number; toS: number; streetHeading: number }
  | { kind: 'interference'; fromS: number; toS: number; db: number };

export interface AntennaChange {
  atS: number;
  state: AntennaWord;
}

const RAMP_S = 10;
const clamp01 = (x: number): number => Math.min(1, Math.max(0, x));

/** How far into (0..1) and back out of a span `t` is, with `rampS` at each end. */
function inside(t: number, fromS: number, toS: number, rampS: number): number {
  if (t < fromS || t > toS + rampS) return 0;
  return Math.min(clamp01((t - fromS) / rampS), clamp01((toS + rampS - t) / rampS));
}

function attenuation(sat: SkySatellite, t: number, i: Impairment): number {
  switch (i.kind) {
    case 'tunnel':
      return inside(t, i.fromS, i.toS, 1) * 60;
    case 'interference':
      return inside(t, i.fromS, i.toS, 1) * i.db;
    case 'fade':
      return t < i.fromS || t > i.toS ? 0 : (t - i.fromS) * 0.4;
    case 'canyon': {
      const across = Math.abs(Math.sin(((sat.azimuth - i.streetHeading) * Math.PI) / 180));
      if (sat.elevation >= 35 || across < 0.35) return 0;
      return inside(t, i.fromS, i.toS, 2) * (10 + ((sat.id * 7) % 16));
    }
    case 'car park': {
      // High satellites go first: each starts to fade once the ramp is (1 - elevation/90)/2 down.
      const progress = inside(t, i.fromS, i.toS, RAMP_S);
      return 40 * clamp01((progress - (1 - sat.elevation / 90) * 0.5) * 2);
    }
  }
}

/** The sky at `t` seconds with the impairments and the antenna state applied (C/N0 below 12 is lost, as in sky.ts). */
export function impairSky(sats: SkySatellite[], t: number, impairments: readonly Impairment[], antenna: AntennaWord): SkySatellite[] {
  if (impairments.length === 0 && antenna === 'OK') return sats;
  return sats.map((s) => {
    if (antenna !== 'OK') return { ...s, snr: undefined, used: false };
    let loss = 0;
    for (const i of impairments) loss += attenuation(s, t, i);
    if (loss === 0 || s.snr === undefined) return s;
    const raw = s.snr - loss;
    const snr = raw < 12 ? undefined : raw;
    return { ...s, snr, used: s.elevation >= 10 && snr !== undefined && snr >= 28 };
  });
}

/** The antenna's state at `t` from a list of changes (OK before the first). */
export function antennaAt(changes: readonly AntennaChange[], t: number): AntennaWord {
  let state: AntennaWord = 'OK';
  for (const c of changes) if (c.atS <= t) state = c.state;
  return state;
}
