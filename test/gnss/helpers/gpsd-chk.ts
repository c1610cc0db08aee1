/**
 * Reads gpsd's expected output (`X.log.chk`) and compares our decoded epochs with its TPV reports,
 * with the tolerances of the conformance test: the last TPV per time; time to the
 * millisecond; lat/lon within 1e-6 degrees; altMSL within 0.05 m and speed within 0.01 m/s where
 * gpsd has them; mode equal.
 */
import { readFileSync } from 'node:fs';
import type { Fix } from '../../../src/fix/fix.js';

export interface GpsdTpv {
  time: number;
  mode: number;
  lat?: number;
  lon?: number;
  altMSL?: number;
  speed?: number;
}

export const WEEK_ROLLOVER_MS = 1024 * 7 * 86_400_000;

/** Logs whose .chk dates gpsd moved forward by 1024 weeks: compared modulo 1024 weeks. */
const ROLLED_OVER = new Set(['rst39.log', 'neo-m8n.log']);

/** The last TPV per time (reports without a time are not fixes we can compare). */
export function readGpsdTpvs(chkPath: string): Map<number, GpsdTpv> {
  const byTime = new Map<number, GpsdTpv>();
  for (const line of readFileSync(chkPath, 'latin1').split('\n')) {
    if (!line.startsWith('{"class":"TPV"')) continue;
    const r = JSON.parse(line) as { time?: string; mode?: number; lat?: number; lon?: number; altMSL?: number; speed?: number };
    if (r.time === undefined) continue;
    const tpv: GpsdTpv = { time: Date.parse(r.time), mode: r.mode ?? 0 };
    if (r.lat !== undefined) tpv.lat = r.lat;
    if (r.lon !== undefined) tpv.lon = r.lon;
    if (r.altMSL !== undefined) tpv.altMSL = r.altMSL;
    if (r.speed !== undefined) tpv.speed = r.speed;
    byTime.delete(tpv.time); // keep insertion order of the last report
    byTime.set(tpv.time, tpv);
  }
  return byTime;
}

export interface Difference {
  log: string;
  /** ISO time of the epoch (gpsd's, for rolled-over logs ours). */
  time: string;
  /** 'missing' (gpsd has a fix, we have none), 'spurious' (we have one, gpsd none), or the fields that differ. */
  kind: string;
  detail: string;
}

export interface Comparison {
  /** gpsd fixes with mode >= 2. */
  total: number;
  matched: number;
  differences: Difference[];
}

function key(log: string, t: number): number {
  return ROLLED_OVER.has(log) ? ((t % WEEK_ROLLOVER_MS) + WEEK_ROLLOVER_MS) % WEEK_ROLLOVER_MS : t;
}

export function compareWithGpsd(log: string, ours: Fix[], gpsd: Map<number, GpsdTpv>): Comparison {
  const mine = new Map<number, Fix>();
  for (const f of ours) mine.set(key(log, f.time), f);
  const theirs = new Map<number, GpsdTpv>();
  for (const t of gpsd.values()) theirs.set(key(log, t.time), t);
  const differences: Difference[] = [];
  let total = 0;
  let matched = 0;
  for (const [k, g] of theirs) {
    if (g.mode < 2) continue;
    total++;
    const f = mine.get(k);
    const time = new Date(g.time).toISOString();
    if (f === undefined || f.mode < 2) {
      differences.push({ log, time, kind: 'missing', detail: f === undefined ? 'no epoch' : `mode ${f.mode}` });
      continue;
    }
    const bad: string[] = [];
    const detail: string[] = [];
    if (f.mode !== g.mode) {
      bad.push('mode');
      detail.push(`mode ${f.mode} vs ${g.mode}`);
    }
    if (
      g.lat !== undefined &&
      (f.lat === undefined || Math.abs(f.lat - g.lat) > 1e-6 || f.lon === undefined || Math.abs(f.lon - (g.lon ?? NaN)) > 1e-6)
    ) {
      bad.push('position');
      detail.push(`lat/lon ${f.lat},${f.lon} vs ${g.lat},${g.lon}`);
    }
    if (g.altMSL !== undefined && (f.altMSL === undefined || Math.abs(f.altMSL - g.altMSL) > 0.05)) {
      bad.push('altMSL');
      detail.push(`altMSL ${f.altMSL} vs ${g.altMSL}`);
    }
    if (g.speed !== undefined && (f.speed === undefined || Math.abs(f.speed - g.speed) > 0.01)) {
      bad.push('speed');
      detail.push(`speed ${f.speed} vs ${g.speed}`);
    }
    if (bad.length === 0) matched++;
    else differences.push({ log, time, kind: bad.join('+'), detail: detail.join('; ') });
  }
  for (const [k, f] of mine) {
    if (f.mode < 2) continue;
    const g = theirs.get(k);
    if (g === undefined || g.mode < 2)
      differences.push({
        log,
        time: new Date(f.time).toISOString(),
        kind: 'spurious',
        detail: g === undefined ? 'gpsd has no report' : `gpsd mode ${g.mode}`,
      });
  }
  return { total, matched, differences };
}
