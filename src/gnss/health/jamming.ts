/**
 * Jamming suspected from C/N0 alone (docs/decisions/receiver-health.md names the rule): a jammer
 * raises the noise floor for every signal at once, so each satellite still tracked falls by about
 * the same number of dB within a second or two, whatever its constellation and elevation. Cover
 * does otherwise: a tunnel or a car park takes the satellites away (lost, not weaker), a street
 * canyon or a roof box takes some and leaves others, and a fading sky falls over tens of seconds.
 * Times are GNSS times of the epochs, one sample per satellite per second.
 */
import type { SatelliteInView } from '../../fix/fix.js';

export const JAMMING_RULE = {
  /** The reference: each satellite's mean C/N0 between 20 and 10 s ago. */
  referenceFromMs: 20_000,
  referenceToMs: 10_000,
  /** Now: the mean of the last 3 s. */
  nowMs: 3_000,
  /** At least this many satellites tracked in both. */
  minSatellites: 4,
  /** Their median fall, dB. */
  medianDropDb: 6,
  /** This share of them fell at least `eachDropDb`, and so did every constellation's median (2+ satellites). */
  share: 0.8,
  eachDropDb: 3,
  /** Alike: the middle half of the falls spans at most this share of the median (cover takes some satellites far more than others). */
  spreadShare: 0.5,
  /** Sudden: at least this share of the fall came after 7-5 s ago. */
  suddenShare: 0.6,
  suddenFromMs: 7_000,
  suddenToMs: 5_000,
  /** Satellites at or above this elevation (degrees) are "high": both halves of the sky must fall. */
  highElevation: 45,
  /** Cleared once the median is back within this of the reference before the jam, for 10 s. */
  recoveredDb: 3,
  recoveredForMs: 10_000,
  /** gpsd's `jam` (0-255, u-blox's CW jamming indicator) at or above this is the receiver's own warning. */
  indicatorSuspect: 100,
} as const;

const KEEP_MS = JAMMING_RULE.referenceFromMs + 1_000;

interface Sample {
  t: number;
  snr: number;
}

interface Track {
  constellation: string;
  elevation?: number;
  samples: Sample[];
}

export interface JammingFinding {
  state: 'none' | 'suspected';
  /** The evidence in words, while suspected. */
  reason?: string;
  /** Median fall of C/N0 over the satellites compared, dB (while suspected: against the level before). */
  dropDb?: number;
}

export class JammingDetector {
  readonly #tracks = new Map<string, Track>();
  #lastSecond = Number.NaN;
  /** The levels before the jam, frozen while it lasts: later references would be jammed ones. */
  #before: Map<string, number> | undefined;
  #recoveredSince: number | undefined;
  #finding: JammingFinding = { state: 'none' };
  #indicator: number | undefined;

  /** gpsd's jamming indicator, when the receiver gives one. */
  indicator(jam: number): void {
    this.#indicator = jam;
  }

  finding(): JammingFinding {
    const jam = this.#indicator;
    if (this.#finding.state === 'none' && jam !== undefined && jam >= JAMMING_RULE.indicatorSuspect)
      return { state: 'suspected', reason: `the receiver's jamming indicator is ${jam}/255` };
    return this.#finding;
  }

  add(timeMs: number, satellites: readonly SatelliteInView[]): void {
    const second = Math.floor(timeMs / 1000);
    if (second === this.#lastSecond) return;
    if (second < this.#lastSecond) this.#reset();
    this.#lastSecond = second;
    for (const s of satellites) {
      if (s.snr === undefined || s.snr <= 0) continue;
      const key = `${s.constellation}:${s.id}:${s.signalId ?? ''}`;
      let track = this.#tracks.get(key);
      if (track === undefined) {
        track = { constellation: s.constellation, samples: [] };
        this.#tracks.set(key, track);
      }
      if (s.elevation !== undefined) track.elevation = s.elevation;
      track.samples.push({ t: timeMs, snr: s.snr });
    }
    for (const [key, track] of this.#tracks) {
      while ((track.samples[0]?.t ?? timeMs) < timeMs - KEEP_MS) track.samples.shift();
      if (track.samples.length === 0) this.#tracks.delete(key);
    }
    if (this.#before === undefined) this.#look(timeMs);
    else this.#watchRecovery(timeMs);
  }

  #reset(): void {
    this.#tracks.clear();
    this.#before = undefined;
    this.#recoveredSince = undefined;
    this.#finding = { state: 'none' };
  }

  #look(t: number): void {
    const r = JAMMING_RULE;
    const drops: { constellation: string; high: boolean | undefined; drop: number; sudden: number }[] = [];
    const reference = new Map<string, number>();
    const lostLevels: number[] = [];
    const keptLevels: number[] = [];
    for (const [key, track] of this.#tracks) {
      const before = mean(track.samples, t - r.referenceFromMs, t - r.referenceToMs);
      if (before === undefined) continue;
      reference.set(key, before);
      const now = mean(track.samples, t - r.nowMs + 1, t);
      if (now === undefined) lostLevels.push(before);
      const mid = mean(track.samples, t - r.suddenFromMs, t - r.suddenToMs);
      if (now === undefined || mid === undefined) continue;
      keptLevels.push(before);
      const high = track.elevation === undefined ? undefined : track.elevation >= r.highElevation;
      drops.push({ constellation: track.constellation, high, drop: before - now, sudden: mid - now });
    }
    if (drops.length < r.minSatellites) return;
    const median = medianOf(drops.map((d) => d.drop));
    if (median < r.medianDropDb) return;
    if (drops.filter((d) => d.drop >= r.eachDropDb).length < r.share * drops.length) return;
    const sorted = drops.map((d) => d.drop).sort((a, b) => a - b);
    const quartile = (q: number): number => sorted[Math.floor(q * (sorted.length - 1))] ?? 0;
    if (quartile(0.75) - quartile(0.25) > r.spreadShare * median) return;
    if (medianOf(drops.map((d) => d.sudden)) < r.suddenShare * median) return;
    const constellations = new Map<string, number[]>();
    for (const d of drops) constellations.set(d.constellation, [...(constellations.get(d.constellation) ?? []), d.drop]);
    for (const list of constellations.values()) if (list.length >= 2 && medianOf(list) < r.eachDropDb) return;
    // A jammer takes the weakest signals first; a roof takes the high satellites, the strongest.
    if (lostLevels.length >= 2 && medianOf(keptLevels) < medianOf(lostLevels)) return;
    // Cover goes by elevation (a roof takes the high ones, a street the low ones); a jammer does not.
    for (const high of [true, false]) {
      const list = drops.filter((d) => d.high === high).map((d) => d.drop);
      if (list.length >= 2 && medianOf(list) < r.eachDropDb) return;
    }
    this.#before = reference;
    this.#recoveredSince = undefined;
    this.#finding = {
      state: 'suspected',
      dropDb: Math.round(median),
      reason: `C/N0 fell ${Math.round(median)} dB at once on ${drops.length} satellites of ${constellations.size} constellation${constellations.size === 1 ? '' : 's'}`,
    };
  }

  #watchRecovery(t: number): void {
    const r = JAMMING_RULE;
    const before = this.#before;
    if (before === undefined) return;
    const drops: number[] = [];
    for (const [key, level] of before) {
      const track = this.#tracks.get(key);
      const now = track === undefined ? undefined : mean(track.samples, t - r.nowMs + 1, t);
      if (now !== undefined) drops.push(level - now);
    }
    // Too few satellites to tell (the jammer took them all): still suspected.
    if (drops.length < r.minSatellites) {
      this.#recoveredSince = undefined;
      return;
    }
    const median = medianOf(drops);
    this.#finding = { ...this.#finding, dropDb: Math.round(median) };
    if (median >= r.recoveredDb) {
      this.#recoveredSince = undefined;
      return;
    }
    this.#recoveredSince ??= t;
    if (t - this.#recoveredSince >= r.recoveredForMs) {
      this.#before = undefined;
      this.#recoveredSince = undefined;
      this.#finding = { state: 'none' };
    }
  }
}

function mean(samples: readonly Sample[], from: number, to: number): number | undefined {
  let sum = 0;
  let n = 0;
  for (const s of samples) {
    if (s.t < from || s.t > to) continue;
    sum += s.snr;
    n++;
  }
  return n === 0 ? undefined : sum / n;
}

function medianOf(values: readonly number[]): number {
  const v = [...values].sort((a, b) => a - b);
  const mid = v.length >> 1;
  return v.length % 2 === 1 ? (v[mid] ?? 0) : ((v[mid - 1] ?? 0) + (v[mid] ?? 0)) / 2;
}
