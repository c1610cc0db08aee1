/**
 * The path policy deciding late (recording.maxDelayS) on generated drives through the real decoder
 * and gate: the path goal at every moving epoch, every stop of 30 s or more with two positions, the
 * live position and every decision within maxIntervalS, and fewer events than deciding at once.
 */
import { describe, expect, it } from 'vitest';
import { createDecoder } from '../../src/gnss/decoder.js';
import type { Fix, RecordedFix } from '../../src/fix/fix.js';
import { QualityGate } from '../../src/gnss/quality-gate.js';
import { RecordingPolicy, type RecordingPolicyOptions } from '../../src/gnss/recording-policy.js';
import { trackFidelity } from '../../src/gnss/track-fidelity.js';
import {
  driveText,
  generateDrive,
  planDenseGridRoute,
  planUrbanDeliveryRoute,
  planWindingRuralRoute,
  type Leg,
} from '../../src/sim/receiver/index.js';
import { seededRandom } from '../../src/sim/random.js';

function fixesOf(legs: Leg[], seed: number, hz = 1): Fix[] {
  const gate = new QualityGate({});
  const out: Fix[] = [];
  const decoder = createDecoder({ onFix: (f) => void (gate.check(f) === undefined && out.push(f)) });
  decoder.pushChunk(Buffer.from(driveText(generateDrive({ legs, seed, hz })), 'latin1'));
  decoder.flush();
  return out;
}

/** The recorded fixes, and for each the newest GNSS time offered when it was recorded. */
function replay(fixes: Fix[], options: Partial<RecordingPolicyOptions>): { out: RecordedFix[]; delays: number[]; liveAge: number } {
  const policy = new RecordingPolicy(options);
  const out: RecordedFix[] = [];
  const delays: number[] = [];
  let live: number | undefined;
  let liveAge = 0;
  for (const f of fixes) {
    for (const r of policy.offer(f)) {
      out.push(r);
      delays.push((f.time - r.time) / 1000);
      live = r.time;
    }
    if (live !== undefined && (f.speed ?? 0) * 3.6 > 6) liveAge = Math.max(liveAge, (f.time - live) / 1000);
  }
  out.push(...policy.flush());
  return { out, delays, liveAge };
}

const drives: [string, () => Fix[]][] = [
  ['dense city grid', () => fixesOf(planDenseGridRoute({ random: seededRandom(41), minutes: 20 }), 41)],
  [
    'urban delivery',
    () => fixesOf(planUrbanDeliveryRoute({ random: seededRandom(42), cityMinutes: [8, 4], highwayMinutes: 5, depotS: 120 }), 42),
  ],
  ['winding rural road', () => fixesOf(planWindingRuralRoute({ random: seededRandom(43), minutes: 15 }), 43)],
];

describe('path policy deciding late (maxDelayS 20)', () => {
  for (const [name, make] of drives) {
    it(`${name}: p95 <= 10 m, max <= 20 m, stops kept, nothing waits past maxIntervalS, fewer events than deciding at once`, () => {
      const fixes = make();
      const late = replay(fixes, { maxDelayS: 20 });
      const now = replay(fixes, { maxDelayS: 0 });
      const f = trackFidelity(fixes, late.out);
      expect(f.movingEpochs).toBeGreaterThan(300);
      expect(f.p95M).toBeLessThanOrEqual(10);
      expect(f.maxM).toBeLessThanOrEqual(20.01);
      expect(f.stopsRepresented).toBe(f.stops);
      expect(Math.max(...late.delays)).toBeLessThanOrEqual(60);
      expect(late.liveAge).toBeLessThanOrEqual(60);
      // In order, each once: the platform draws them as they come.
      const times = late.out.map((r) => r.time);
      expect(times).toEqual([...new Set(times)].sort((a, b) => a - b));
      expect(late.out.length).toBeLessThan(now.out.length * 0.95);
    });
  }

  it('a tighter hard bound is kept too (pathMaxDeviationM 12), at 10 Hz', () => {
    const fixes = fixesOf(planDenseGridRoute({ random: seededRandom(44), minutes: 6 }), 44, 10);
    const { out } = replay(fixes, { maxDelayS: 10, pathMaxDeviationM: 12 });
    const f = trackFidelity(fixes, out);
    expect(f.maxM).toBeLessThanOrEqual(12.01);
    expect(f.p95M).toBeLessThanOrEqual(10);
    expect(f.stopsRepresented).toBe(f.stops);
  });

  it('flush delivers what still waits, ending where the receiver did', () => {
    const fixes = fixesOf(planWindingRuralRoute({ random: seededRandom(45), minutes: 3 }), 45).slice(0, 150);
    const { out } = replay(fixes, { maxDelayS: 30 });
    expect(out.at(-1)?.time).toBe(fixes.at(-1)?.time);
    expect(trackFidelity(fixes, out).maxM).toBeLessThanOrEqual(20.01);
  });
});
