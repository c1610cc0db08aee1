/**
 * Satellites in view, assembled from GSV groups. Each talker (and, in NMEA 4.10, each signal id)
 * sends its own group of 1..n parts; a group replaces the previous one of the same key only when
 * its last part arrived, so a lost part never shows half a sky. GSV groups may span several epochs
 * (the Garmin 17N spreads them), so the sky is not tied to an epoch.
 */
import type { SatelliteInView } from '../fix/fix.js';
import type { GsvSentence } from './sentences/types.js';
import { satelliteConstellation } from './sentences/talker.js';

interface Group {
  total: number;
  next: number;
  satellites: SatelliteInView[];
}

/** Groups not refreshed for this many epochs are dropped (a receiver that stopped sending GLGSV). */
const STALE_EPOCHS = 10;

export class Sky {
  #pending = new Map<string, Group>();
  #complete = new Map<string, { satellites: SatelliteInView[]; epoch: number }>();
  #epoch = 0;
  #view: SatelliteInView[] | undefined = [];
  #used: ReadonlySet<string> = new Set();
  #usedKey = '';

  add(s: GsvSentence): void {
    const key = s.signalId === undefined ? s.talker : `${s.talker}/${s.signalId}`;
    let group = this.#pending.get(key);
    if (s.part === 1 || group === undefined || group.total !== s.total || group.next !== s.part) {
      if (s.part !== 1) {
        this.#pending.delete(key);
        return;
      }
      group = { total: s.total, next: 1, satellites: [] };
      this.#pending.set(key, group);
    }
    for (const sat of s.satellites) {
      if (group.satellites.length >= 64) break;
      const view: SatelliteInView = { constellation: satelliteConstellation(s.talker, undefined, sat.id), id: sat.id, used: false };
      if (sat.elevation !== undefined) view.elevation = sat.elevation;
      if (sat.azimuth !== undefined) view.azimuth = sat.azimuth;
      if (sat.snr !== undefined) view.snr = sat.snr;
      if (s.signalId !== undefined) view.signalId = s.signalId;
      group.satellites.push(view);
    }
    group.next++;
    if (s.part === s.total) {
      this.#pending.delete(key);
      this.#complete.set(key, { satellites: group.satellites, epoch: this.#epoch });
      this.#view = undefined;
    }
  }

  /**
   * The satellites in view, marked used as of the last epoch. A read between a GSV group and the
   * end of its epoch (status asks at any moment) keeps those marks and does not count as an epoch.
   */
  current(): SatelliteInView[] {
    return this.#view ?? this.#build(this.#used, this.#usedKey);
  }

  /**
   * The satellites in view, marked used from the epoch's GSA ids (`constellation:id` keys). The
   * returned array is shared until the sky or the used set changes: callers must not modify it.
   */
  snapshot(used: ReadonlySet<string>, usedKey: string): SatelliteInView[] {
    this.#age();
    if (this.#view !== undefined && usedKey === this.#usedKey) return this.#view;
    return this.#build(used, usedKey);
  }

  /**
   * An epoch's end as `snapshot` counts it, without building the view: `current()` builds it when
   * asked. A view built at every epoch and held by the fixes that carry it outlives two scavenges
   * and is promoted: 10 kB/s of old-space garbage at 10 Hz (docs/decisions/daemon-memory.md).
   */
  mark(used: ReadonlySet<string>, usedKey: string): void {
    this.#age();
    if (usedKey === this.#usedKey) return;
    this.#used = used;
    this.#usedKey = usedKey;
    this.#view = undefined;
  }

  #age(): void {
    this.#epoch++;
    for (const [key, g] of this.#complete) {
      if (this.#epoch - g.epoch > STALE_EPOCHS) {
        this.#complete.delete(key);
        this.#view = undefined;
      }
    }
  }

  #build(used: ReadonlySet<string>, usedKey: string): SatelliteInView[] {
    const view: SatelliteInView[] = [];
    for (const g of this.#complete.values()) {
      for (const sat of g.satellites) {
        // gpsd marks a satellite used only when it is tracked (SNR > 0): with several signals per
        // satellite in NMEA 4.10, GSA does not say which one was used.
        const isUsed = used.has(`${sat.constellation}:${sat.id}`) && sat.snr !== undefined && sat.snr > 0;
        view.push(isUsed === sat.used ? sat : { ...sat, used: isUsed });
      }
    }
    this.#view = view;
    this.#used = used;
    this.#usedKey = usedKey;
    return view;
  }
}
