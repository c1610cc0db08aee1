/**
 * The path policy deciding late (recording.maxDelayS) in the running daemon: a dense city grid
 * replayed from a file reaches the simulator as exactly the positions the policy chooses offline
 * from the same fixes, each once.
 */
import { describe, expect, it } from 'vitest';
import { planDenseGridRoute } from '../../src/sim/receiver/index.js';
import { seededRandom } from '../../src/sim/random.js';
import { startReplayDaemon } from './daemon.js';
import { expectDeliveredOnce, recordedOffline } from './recorded-offline.js';

const RECORDING = { mode: 'path', maxDelayS: 20 } as const;

describe('daemon with recording.maxDelayS', () => {
  it('delivers the positions the late policy chooses, in full, each once', async () => {
    const drive = { legs: planDenseGridRoute({ random: seededRandom(51), minutes: 6 }), seed: 51 };
    // What the policy records while the replay runs; what it still holds at the end waits for the stop.
    const { fixes, times: expected } = recordedOffline(drive, RECORDING);
    expect(expected.length).toBeGreaterThan(10);
    expect(expected.length).toBeLessThan(fixes.length / 5);

    const replay = await startReplayDaemon({ prefix: 'ta-e2e-late-', drive, replaySpeed: 0, config: { recording: RECORDING } });
    await expectDeliveredOnce(replay, expected, 60_000);
  });
});
