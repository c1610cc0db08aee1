/**
 * A parked vehicle in the running daemon with the default recording: four hours parked between two
 * short drives, replayed from a file as fast as it reads, reach the simulator as the arrival, the
 * position two minutes in, the first heartbeat an hour later and then one every
 * recording.parkedHeartbeatS (3 hours), each once: the parked heartbeat delivered, not only decided.
 */
import { describe, expect, it } from 'vitest';
import { createDecoder } from '../../src/gnss/decoder.js';
import type { Fix } from '../../src/fix/fix.js';
import { QualityGate } from '../../src/gnss/quality-gate.js';
import { RecordingPolicy, recordingDefaults } from '../../src/gnss/recording-policy.js';
import { driveText, generateDrive } from '../../src/sim/receiver/index.js';
import type { Leg } from '../../src/sim/receiver/route.js';
import { waitFor } from '../helpers/wait.js';
import { receivedByTime, startReplayDaemon } from './daemon.js';

const PARK_S = 4 * 3600 + 600;
const LEGS: Leg[] = [
  { kind: 'drive', phase: 'city', heading: 90, distanceM: 400, cruiseMps: 8, endMps: 0 },
  { kind: 'park', phase: 'depot', seconds: PARK_S },
  { kind: 'drive', phase: 'city', heading: 0, distanceM: 400, cruiseMps: 8, endMps: 8 },
];

describe('daemon with a vehicle parked for hours', () => {
  it('delivers the parked heartbeats at stoppedHeartbeatS, then every parkedHeartbeatS, each once', { timeout: 180_000 }, async () => {
    const drive = { legs: LEGS, seed: 61 };
    const gate = new QualityGate({});
    const fixes: Fix[] = [];
    const decoder = createDecoder({ onFix: (f) => void (gate.check(f) === undefined && fixes.push(f)) });
    decoder.pushChunk(Buffer.from(driveText(generateDrive(drive)), 'latin1'));
    decoder.flush();
    const policy = new RecordingPolicy();
    const expected = fixes.flatMap((f) => policy.offer(f)).map((r) => r.time);
    // The daemon's recording is the default one (mode path; the e2e helper's own default is "all").
    // The park as the defaults space it: arrival, +stopRepeatS, +stoppedHeartbeatS, +parkedHeartbeatS.
    const { stopRepeatS, stoppedHeartbeatS, parkedHeartbeatS } = recordingDefaults();
    const gaps = expected.slice(1).map((t, i) => Math.round((t - (expected[i] ?? t)) / 1000));
    // Each heartbeat counts from the position before it; the last gap is to moving off, 480 s later.
    const parkedGaps = gaps.filter((g) => g >= stopRepeatS);
    expect(parkedGaps).toEqual([
      stopRepeatS,
      stoppedHeartbeatS,
      parkedHeartbeatS,
      PARK_S - stopRepeatS - stoppedHeartbeatS - parkedHeartbeatS - 1,
    ]);

    const { sim, daemon } = await startReplayDaemon({
      prefix: 'ta-e2e-parked-',
      drive,
      replaySpeed: 0,
      config: { recording: { mode: 'path' } },
    });
    await waitFor('the recorded positions at the simulator', () => sim.events.size >= expected.length, {
      timeoutMs: 120_000,
      intervalMs: 200,
      detail: () => `${sim.events.size} of ${expected.length}\n${daemon.log()}`,
    });
    const byTime = receivedByTime(sim.events);
    expect([...byTime.keys()].sort((a, b) => a - b)).toEqual(expected);
    expect([...byTime.values()].every((ids) => ids.size === 1)).toBe(true);
  });
});
