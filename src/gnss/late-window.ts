/**
 * The moving part of the `path` policy when it may decide late (`recording.maxDelayS` > 0): the
 * fixes since the last recorded one wait in a window, and a position is chosen only once the path
 * has shown where it goes for `maxDelayS` more seconds. The choice is a min-# polyline over the
 * window (dynamic programming on the time-synchronised distance, as the platform interpolates):
 * the fewest positions whose straight lines, travelled at constant speed, keep every fix within
 * `hardM`, and within `softM` but for a running share of the moving time (`OVER_SHARE`), so the
 * 95th percentile stays within `softM` while the few epochs past it buy whole segments. Of the
 * optimal chains the one whose first segment reaches furthest is taken, and only its first
 * position is recorded; the rest is decided again with the fixes that come after.
 * Why, and how it meets the commit interval: docs/decisions/late-path-policy.md.
 */
import type { Fix } from '../fix/fix.js';

export interface LateWindowOptions {
  /** Most epochs stay within this (the p95 goal), metres. */
  softM: number;
  /** No epoch goes past this, metres. */
  hardM: number;
  /** Once the window needs a position, the path after it is watched this long before it is chosen, seconds (the heartbeat bounds the whole wait). */
  maxDelayS: number;
  /** Positions at least this far apart in time, seconds. */
  minIntervalS: number;
}

/**
 * The share of moving time allowed past `softM`: under the 5 % a 95th percentile allows, with room
 * for the benches' own moving test (3 km/h by the fix's speed) counting a few epochs the policy does not.
 */
const OVER_SHARE = 0.04;
/** The share is earned over at most this much moving time, seconds: it cannot be saved on a highway and spent all at once in town. */
const BUDGET_HORIZON_S = 600;
/** An epoch weighs the time to the next one, but no more than this (a gap says nothing of the path), seconds. */
const MAX_WEIGHT_S = 10;
/** Mean metres per degree of latitude; a local plane is exact enough for deviations of metres over a few km. */
const M_PER_DEG = 111_195;

interface Point {
  fix: Fix;
  /** ms since the origin */
  t: number;
  x: number;
  y: number;
  /** seconds this epoch stands for when it lies past softM */
  w: number;
}

/** A chain of positions from the anchor: how many, the time they spend past softM, its first position, its previous one. */
interface Label {
  n: number;
  over: number;
  first: number;
  prev: number;
}

export class LateWindow {
  readonly #options: LateWindowOptions;
  /** The anchor (last recorded position) first, then the fixes since, oldest first. */
  #pts: Point[] = [];
  #origin: Fix | undefined;
  #cosLat = 1;
  /** Seconds of moving time that may still lie past softM. */
  #budget = 0;
  /** The first position of the last plan (an index into #pts), until it must be decided. */
  #planned: number | undefined;
  #plannedAt = 0;

  constructor(options: LateWindowOptions) {
    this.#options = options;
  }

  /** The policy recorded `fix` on its own (first, stop, departure, heartbeat): the window starts from it. */
  reset(fix: Fix): void {
    this.#origin = fix;
    this.#cosLat = Math.cos(((fix.lat ?? 0) * Math.PI) / 180);
    this.#pts = [this.#point(fix)];
    this.#planned = undefined;
  }

  /** Fixes waiting, the anchor not counted. */
  get length(): number {
    return Math.max(0, this.#pts.length - 1);
  }

  /** The newest fix waiting, if any. */
  last(): Fix | undefined {
    return this.#pts.length > 1 ? this.#pts[this.#pts.length - 1]!.fix : undefined;
  }

  /** A moving fix: the positions decided now (their delay reached), oldest first. */
  push(fix: Fix): Fix[] {
    const prev = this.#pts[this.#pts.length - 1];
    if (prev === undefined) {
      this.reset(fix);
      return [];
    }
    const p = this.#point(fix);
    prev.w = Math.min(MAX_WEIGHT_S, Math.max(0, (p.t - prev.t) / 1000));
    this.#budget = Math.min(this.#budget + OVER_SHARE * prev.w, OVER_SHARE * BUDGET_HORIZON_S);
    this.#pts.push(p);
    const out: Fix[] = [];
    const delayMs = this.#options.maxDelayS * 1000;
    for (;;) {
      const end = this.#pts.length - 1;
      if (this.#fit(0, end) <= this.#budget) {
        this.#planned = undefined;
        return out;
      }
      // Planned again once a second of GNSS time: a later fix may need an earlier position.
      if (this.#planned !== undefined && p.t - this.#plannedAt < 1000 && p.t - this.#pts[this.#planned]!.t < delayMs) return out;
      const first = this.#plan(end)[0]!;
      this.#plannedAt = p.t;
      if (p.t - this.#pts[first]!.t < delayMs) {
        this.#planned = first;
        return out;
      }
      out.push(this.#take(first));
    }
  }

  /**
   * The heartbeat is due: the first position the path needs now, before its delay (the live position
   * must not wait), or undefined when one straight line still holds the whole window.
   */
  early(): Fix | undefined {
    const end = this.#pts.length - 1;
    if (end < 1 || this.#fit(0, end) <= this.#budget) return undefined;
    return this.#take(this.#plan(end)[0]!);
  }

  /**
   * The window ends at `end` (a stop, a gap, a heartbeat, shutdown), which the policy records itself:
   * the positions the fewest straight lines to it need, oldest first. The window then starts from `end`.
   */
  close(end: Fix): Fix[] {
    const last = this.#pts[this.#pts.length - 1];
    if (last === undefined) return [];
    let endIndex = this.#pts.length - 1;
    if (last.fix !== end) {
      const p = this.#point(end);
      last.w = Math.min(MAX_WEIGHT_S, Math.max(0, (p.t - last.t) / 1000));
      this.#pts.push(p);
      endIndex++;
    }
    const chain = endIndex > 0 ? this.#plan(endIndex) : [];
    let from = 0;
    for (const i of chain) {
      this.#spend(from, i);
      from = i;
    }
    const out = chain.slice(0, -1).map((i) => this.#pts[i]!.fix);
    this.#pts = [this.#pts[endIndex]!];
    this.#planned = undefined;
    return out;
  }

  /** Records the position at `index`: its segment's time past softM is spent, and the window starts from it. */
  #take(index: number): Fix {
    this.#spend(0, index);
    const p = this.#pts[index]!;
    this.#pts = this.#pts.slice(index);
    this.#planned = undefined;
    return p.fix;
  }

  /** The segment from #pts[a] to #pts[b] is delivered: its time past softM is taken from the budget. */
  #spend(a: number, b: number): void {
    const over = this.#fit(a, b);
    this.#budget = Number.isFinite(over) ? this.#budget - over : this.#budget;
  }

  /**
   * The chain of positions (indices into #pts, `end` last) from the anchor to `end` with the fewest
   * segments, then the least time past softM, then the furthest first position.
   */
  #plan(end: number): number[] {
    const cands = this.#candidates(end);
    const labels: (Label | undefined)[] = [{ n: 0, over: 0, first: -1, prev: -1 }];
    for (let b = 1; b < cands.length; b++) {
      let best: Label | undefined;
      for (let a = 0; a < b; a++) {
        const from = labels[a];
        if (from === undefined) continue;
        // Neighbouring candidates always join, so a chain exists whatever the budget.
        const adjacent = b === a + 1;
        let seg = this.#fit(cands[a]!, cands[b]!);
        if (!Number.isFinite(seg)) {
          if (!adjacent) continue;
          seg = 0;
        }
        const over = from.over + seg;
        if (!adjacent && over > this.#budget) continue;
        const label: Label = { n: from.n + 1, over, first: a === 0 ? cands[b]! : from.first, prev: a };
        if (best === undefined || better(label, best)) best = label;
      }
      labels.push(best);
    }
    const chain: number[] = [];
    for (let b = cands.length - 1; b > 0; b = labels[b]!.prev) chain.unshift(cands[b]!);
    return chain;
  }

  /** The fixes a position may be chosen from: at most one per minIntervalS (and per second), and `end`. */
  #candidates(end: number): number[] {
    const spacing = Math.max(this.#options.minIntervalS, 1) * 1000;
    const out = [0];
    for (let i = 1; i < end; i++) {
      const t = this.#pts[i]!.t;
      if (t - this.#pts[out[out.length - 1]!]!.t >= spacing && this.#pts[end]!.t - t >= spacing) out.push(i);
    }
    out.push(end);
    return out;
  }

  /**
   * The straight segment from #pts[a] to #pts[b] at constant speed: Infinity when some fix between
   * lies past hardM from where it puts the vehicle at the fix's time, else the seconds past softM.
   */
  #fit(a: number, b: number): number {
    const pa = this.#pts[a]!;
    const pb = this.#pts[b]!;
    const span = pb.t - pa.t;
    if (!(span > 0)) return 0;
    const hard2 = this.#options.hardM ** 2;
    const soft2 = this.#options.softM ** 2;
    const dx = pb.x - pa.x;
    const dy = pb.y - pa.y;
    let over = 0;
    for (let k = a + 1; k < b; k++) {
      const q = this.#pts[k]!;
      const u = (q.t - pa.t) / span;
      const ex = q.x - pa.x - dx * u;
      const ey = q.y - pa.y - dy * u;
      const d2 = ex * ex + ey * ey;
      if (d2 > hard2) return Infinity;
      if (d2 > soft2) over += q.w;
    }
    return over;
  }

  #point(fix: Fix): Point {
    const o = this.#origin!;
    return {
      fix,
      t: fix.time - o.time,
      x: ((fix.lon ?? 0) - (o.lon ?? 0)) * M_PER_DEG * this.#cosLat,
      y: ((fix.lat ?? 0) - (o.lat ?? 0)) * M_PER_DEG,
      w: 0,
    };
  }
}

function better(a: Label, b: Label): boolean {
  if (a.n !== b.n) return a.n < b.n;
  if (a.over !== b.over) return a.over < b.over;
  return a.first > b.first;
}
