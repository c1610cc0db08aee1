/**
 * Signal strength a technician can compare across vans: the mean C/N0 of the four strongest
 * satellites used (the weak ones come and go with the sky, the strongest say what the antenna and
 * its cable deliver), and how many satellites are above 30 dB-Hz, each over the last 10 s of GNSS
 * time and against the minute before. One sample per GNSS second: GSV changes once a second.
 */
import type { SatelliteInView } from '../../fix/fix.js';

export const STRONG_DB_HZ = 30;
const TOP = 4;
/** The figure now: the mean of the last 10 s. */
const RECENT_MS = 10_000;
/** The trend compares it with the 60 s before. */
const EARLIER_MS = 60_000;
/** Changes smaller than this are "steady": the sky alone moves the top four by a dB or two. */
const TREND_DB = 3;

export interface SignalSummary {
  /** Mean C/N0 of the four strongest used satellites (strongest tracked when the receiver says none are used), dB-Hz, last 10 s. */
  topMeanDbHz?: number;
  /** Whether those were used satellites or, lacking GSA, the strongest in view. */
  basis: 'used' | 'in view';
  /** Satellites above 30 dB-Hz at the last GSV. */
  strong: number;
  /** Last 10 s minus the minute before, dB; absent until both have samples. */
  trendDb?: number;
  /** Strong satellites now minus the mean of the minute before. */
  strongTrend?: number;
  trend: 'falling' | 'steady' | 'rising' | 'unknown';
}

interface Sample {
  t: number;
  top?: number;
  strong: number;
}

export function topMean(satellites: readonly SatelliteInView[]): { mean?: number; basis: 'used' | 'in view' } {
  const used = satellites.filter((s) => s.used && s.snr !== undefined && s.snr > 0);
  const pool = used.length > 0 ? used : satellites.filter((s) => s.snr !== undefined && s.snr > 0);
  const basis = used.length > 0 || pool.length === 0 ? 'used' : 'in view';
  if (pool.length === 0) return { basis };
  const top = pool
    .map((s) => s.snr ?? 0)
    .sort((a, b) => b - a)
    .slice(0, TOP);
  return { mean: top.reduce((a, b) => a + b, 0) / top.length, basis };
}

export class SignalStrength {
  readonly #samples: Sample[] = [];
  #basis: 'used' | 'in view' = 'used';
  #lastSecond = Number.NaN;

  /** One epoch's sky at its GNSS time (ms); epochs within the same second as the last sample are skipped. */
  add(timeMs: number, satellites: readonly SatelliteInView[]): void {
    const second = Math.floor(timeMs / 1000);
    if (second === this.#lastSecond) return;
    this.#lastSecond = second;
    const { mean, basis } = topMean(satellites);
    this.#basis = basis;
    let strong = 0;
    for (const s of satellites) if (s.snr !== undefined && s.snr > STRONG_DB_HZ) strong++;
    // A time step backwards (a replay restarted) starts over rather than mixing two drives.
    const previous = this.#samples[this.#samples.length - 1];
    if (previous !== undefined && previous.t > timeMs) this.#samples.length = 0;
    this.#samples.push(mean === undefined ? { t: timeMs, strong } : { t: timeMs, top: mean, strong });
    while ((this.#samples[0]?.t ?? timeMs) < timeMs - RECENT_MS - EARLIER_MS) this.#samples.shift();
  }

  summary(): SignalSummary {
    const last = this.#samples[this.#samples.length - 1];
    if (last === undefined) return { basis: this.#basis, strong: 0, trend: 'unknown' };
    const recent = this.#samples.filter((s) => s.t > last.t - RECENT_MS);
    const earlier = this.#samples.filter((s) => s.t <= last.t - RECENT_MS);
    const out: SignalSummary = { basis: this.#basis, strong: last.strong, trend: 'unknown' };
    const now = meanOf(recent.map((s) => s.top));
    if (now !== undefined) out.topMeanDbHz = round1(now);
    const before = meanOf(earlier.map((s) => s.top));
    if (earlier.length > 0) out.strongTrend = round1(last.strong - (meanOf(earlier.map((s) => s.strong)) ?? 0));
    if (now !== undefined && before !== undefined) {
      out.trendDb = round1(now - before);
      out.trend = out.trendDb <= -TREND_DB ? 'falling' : out.trendDb >= TREND_DB ? 'rising' : 'steady';
    }
    return out;
  }
}

function meanOf(values: readonly (number | undefined)[]): number | undefined {
  let sum = 0;
  let n = 0;
  for (const v of values) {
    if (v === undefined) continue;
    sum += v;
    n++;
  }
  return n === 0 ? undefined : sum / n;
}

export function round1(x: number): number {
  return Math.round(x * 10) / 10;
}
