/**
 * One epoch being assembled: what the sentences sharing one UTC time said, merged in arrival
 * order with gpsd's rules (driver_nmea0183.c), so that the result matches gpsd's TPV reports:
 * - the last sentence carrying a valid position wins (GGA, GNS, RMC, GLL, from any talker), and a
 *   later sentence saying "no fix" makes the epoch a no-fix one: gpsd merges each sentence into its
 *   fix in turn (gps_merge_fix), so an epoch that carries two positions reports the later one
 *   (test/gnss/dual-position.test.ts, on hand-written epochs and the corpus);
 * - the fix mode is set by each sentence in turn (GSA says it outright; GGA infers 3D from an
 *   altitude and 4+ satellites; RMC and GLL keep 3D when an altitude is known), and a 3D fix is
 *   not downgraded to 2D by a sentence that cannot tell (RMC) while an altitude is held;
 * - speed and course come from RMC or VTG, whichever came last.
 */
import { KNOTS_TO_MPS } from '../fix/fix.js';
import { DAY_MS } from './sentences/fields.js';
import { satelliteConstellation } from './sentences/talker.js';
import type { Sentence } from './sentences/types.js';

const HALF_DAY_MS = DAY_MS / 2;

/** What the previous epoch left behind that gpsd's mode rules look at. */
export interface Carry {
  mode: number;
  hasAltitude: boolean;
  /** Satellites used according to the last GSA (gpsd's `satellites_used`). */
  gsaUsed: number;
}

export class EpochState {
  readonly timeOfDay: number;
  date: number | undefined;
  /** 0 until a sentence sets it. */
  mode = 0;
  lat: number | undefined;
  lon: number | undefined;
  altMSL: number | undefined;
  speed: number | undefined;
  track: number | undefined;
  hdop: number | undefined;
  pdop: number | undefined;
  vdop: number | undefined;
  quality: number | undefined;
  ggaSatellites: number | undefined;
  /** `constellation:id` of the satellites the epoch's GSAs list. */
  readonly used = new Set<string>();
  gsaSeen = false;
  /** Key of the last sentence (talker+type+occurrence), to learn which sentence ends a cycle. */
  lastKey = '';
  /** Key of the last sentence that carried a time (what gpsd learns as its cycle ender). */
  lastTimedKey = '';
  readonly #occurrences = new Map<string, number>();
  readonly #carry: Carry;

  constructor(timeOfDay: number, carry: Carry) {
    this.timeOfDay = timeOfDay;
    this.#carry = carry;
  }

  /** Whether a sentence with this key was applied. */
  has(key: string): boolean {
    const at = key.indexOf('#');
    const n = this.#occurrences.get(at < 0 ? key : key.slice(0, at));
    return n !== undefined && n >= (at < 0 ? 1 : Number(key.slice(at + 1)));
  }

  /** Applies one sentence; returns its key (e.g. `GNGSA#3`). */
  apply(s: Sentence, timed: boolean): string {
    const base = s.talker + s.kind;
    const n = (this.#occurrences.get(base) ?? 0) + 1;
    this.#occurrences.set(base, n);
    this.lastKey = n === 1 ? base : `${base}#${n}`;
    if (timed) this.lastTimedKey = this.lastKey;
    switch (s.kind) {
      case 'GGA': {
        if (s.hdop !== undefined) this.hdop = s.hdop;
        this.quality = s.quality;
        this.ggaSatellites = s.satellitesUsed;
        // Quality 0 or empty: no fix (myguide-3100 sends a position with an empty quality).
        if (s.quality === undefined || s.quality === 0 || s.lat === undefined || s.lon === undefined) {
          this.#setMode(1);
          break;
        }
        this.#position(s.lat, s.lon);
        const sats = s.satellitesUsed ?? 0;
        let mode = 2;
        if (s.altMSL !== undefined) {
          this.altMSL = s.altMSL;
          if (sats >= 4) mode = 3;
        }
        // gpsd: fewer than 3 satellites cannot be a fix, whatever the quality flag says.
        if (sats < 3) mode = 1;
        this.#setMode(mode);
        break;
      }
      case 'GNS': {
        if (s.hdop !== undefined) this.hdop = s.hdop;
        this.ggaSatellites = s.satellitesUsed;
        // One mode letter per constellation: valid when any constellation is not 'N'.
        if (!/[^N]/.test(s.modes) || s.navStatus === 'U' || s.navStatus === 'V' || s.lat === undefined || s.lon === undefined) {
          this.#setMode(1);
          break;
        }
        this.#position(s.lat, s.lon);
        let mode = 2;
        if (s.altMSL !== undefined) {
          this.altMSL = s.altMSL;
          if ((s.satellitesUsed ?? 0) > 3) mode = 3;
        }
        this.#setMode(mode);
        break;
      }
      case 'RMC': {
        if (!(s.status === 'A' || s.status === 'D') || s.faaMode === 'N') {
          this.#setMode(1);
          break;
        }
        if (s.date !== undefined) this.date = s.date;
        if (s.speedKnots !== undefined) this.speed = s.speedKnots * KNOTS_TO_MPS;
        if (s.track !== undefined) this.track = s.track;
        if (s.lat === undefined || s.lon === undefined) {
          this.#setMode(1);
          break;
        }
        this.#position(s.lat, s.lon);
        // RMC cannot tell 2D from 3D: 3D when 4+ satellites are used or an altitude is known.
        const mode = this.#carry.gsaUsed > 3 || this.#hasAltitude() || this.#currentMode() === 3 ? 3 : 2;
        this.#setMode(mode);
        break;
      }
      case 'GLL': {
        if (s.status !== 'A' || s.faaMode === 'N' || s.lat === undefined || s.lon === undefined) {
          this.#setMode(1);
          break;
        }
        this.#position(s.lat, s.lon);
        this.#setMode(this.#hasAltitude() || this.#carry.gsaUsed > 3 ? 3 : 2);
        break;
      }
      case 'VTG': {
        // Estimated (dead reckoning) and not-valid VTGs are ignored, as gpsd does.
        if (s.faaMode === 'N' || s.faaMode === 'E') break;
        const speed = s.speedKnots !== undefined ? s.speedKnots * KNOTS_TO_MPS : s.speedKmh !== undefined ? s.speedKmh / 3.6 : undefined;
        if (speed !== undefined) this.speed = speed;
        if (s.track !== undefined) this.track = s.track;
        break;
      }
      case 'GSA': {
        if (s.pdop !== undefined) this.pdop = s.pdop;
        if (s.hdop !== undefined) this.hdop = s.hdop;
        if (s.vdop !== undefined) this.vdop = s.vdop;
        this.gsaSeen = true;
        for (const id of s.ids) this.used.add(`${satelliteConstellation(s.talker, s.systemId, id)}:${id}`);
        if (s.fixType !== undefined) this.#setMode(s.fixType);
        break;
      }
      case 'PGRMZ':
        if (s.altMSL !== undefined) this.altMSL = s.altMSL;
        if (s.dimension !== undefined) this.#setMode(s.dimension);
        break;
      case 'ZDA':
        // The date of the ZDA's own time; moved by a day when that time and the epoch's straddle
        // midnight.
        if (s.date !== undefined) {
          const shift = s.timeOfDay === undefined ? 0 : this.timeOfDay - s.timeOfDay;
          this.date = s.date + (shift > HALF_DAY_MS ? -DAY_MS : shift < -HALF_DAY_MS ? DAY_MS : 0);
        }
        break;
      case 'GSV':
        break;
    }
    return this.lastKey;
  }

  #position(lat: number, lon: number): void {
    this.lat = lat;
    this.lon = lon;
  }

  #currentMode(): number {
    return this.mode === 0 ? this.#carry.mode : this.mode;
  }

  #hasAltitude(): boolean {
    return this.altMSL !== undefined || this.#carry.hasAltitude;
  }

  #setMode(mode: number): void {
    // gpsd: "don't downgrade mode if holding previous fix, usually because of xxRMC which does
    // not report 2D/3D".
    if (mode === 2 && this.#currentMode() === 3 && this.#hasAltitude()) return void (this.mode = 3);
    this.mode = mode;
  }
}
