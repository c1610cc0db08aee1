/**
 * A parked vehicle in the running daemon with the default recording: four hours parked between two
 * short drives, replayed from a file as fast as it reads, reach the simulator as the arrival, the
 * position two minutes in, the first heartbeat an hour later and then one every
 * recording.parkedHeartbeatS (3 hours), each once: the parked heartbeat delivered, not only decided.
 */
import { describe, expect, it } from 'vitest';
import { recordingDefaults } from '../../src/gnss/recording-policy.js';
import type { Leg } from '../../src/sim/receiver/route.js';
import { startReplayDaemon } from './daemon.js';
import { expectDeliveredOnce, recordedOffline } from './recorded-offline.js';

const PARK_S = 4 * 3600 + 600;
const LEGS: Leg[] = [
  { kind: 'drive', phase: 'city', heading: 90, distanceM: 400, cruiseMps: 8, endMps: 0 },
  { kind: 'park', phase: 'depot', seconds: PARK_S },
  { kind: 'drive', phase: 'city', heading: 0, distanceM: 400, cruiseMps: 8, endMps: 8 },
];

describe('daemon with a vehicle parked for hours', () => {
  it('delivers the parked heartbeats at stoppedHeartbeatS, then every parkedHeartbeatS, each once', { timeout: 180_000 }, async () => {
    const drive = { legs: LEGS, seed: 61 };
    const { times: expected } = recordedOffline(drive);
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

    const replay = await startReplayDaemon({
      prefix: 'ta-e2e-parked-',
      drive,
      replaySpeed: 0,
      config: { recording: { mode: 'path' } },
    });
    await expectDeliveredOnce(replay, expected, 120_000);
  });
});
