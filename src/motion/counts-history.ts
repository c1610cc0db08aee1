/** The odometer and engine seconds at a GNSS time. */
export interface Counts {
  time: number;
  odometerM: number;
  engineS: number;
}

/** Samples apart: the odometer between two of them is interpolated (at 30 m/s, metres off at most). */
const SAMPLE_MS = 1000;
/** Two samples farther apart span a fix gap: nothing between them is known, so the earlier stands. */
const MAX_INTERPOLATE_MS = 2000;

/**
 * The counts of the last windowMs, one sample a second and always the latest epoch's, so an event
 * dated back (a start confirmed seconds after it began, a stop at the edge of a fix gap) carries
 * the odometer of its own time, not of the moment it was made. Bounded: windowMs / SAMPLE_MS + 2.
 */
export class CountsHistory {
  readonly #windowMs: number;
  #samples: Counts[] = [];

  constructor(windowMs: number) {
    this.#windowMs = windowMs;
  }

  push(counts: Counts): void {
    const s = this.#samples;
    const before = s.at(-2);
    const last = s.at(-1);
    // The latest is always the last sample: it replaces a last one under a second from its predecessor,
    // unless a fix gap follows that one (the edge of a gap is kept: a stop may be dated there).
    if (before !== undefined && last!.time - before.time < SAMPLE_MS && counts.time - last!.time <= MAX_INTERPOLATE_MS)
      s[s.length - 1] = counts;
    else s.push(counts);
    while (s.length > 2 && counts.time - s[0]!.time > this.#windowMs) s.shift();
  }

  /** The counts at this time; the latest for a time after it, the oldest kept for one before the window. */
  at(time: number): Counts | undefined {
    const s = this.#samples;
    let i = s.length - 1;
    while (i > 0 && s[i]!.time > time) i--;
    const a = s[i];
    if (a === undefined || a.time >= time) return a;
    const b = s[i + 1];
    if (b === undefined || b.time - a.time > MAX_INTERPOLATE_MS) return a;
    const f = (time - a.time) / (b.time - a.time);
    return { time, odometerM: a.odometerM + f * (b.odometerM - a.odometerM), engineS: a.engineS + f * (b.engineS - a.engineS) };
  }

  clear(): void {
    this.#samples = [];
  }
}
