/**
 * The path policy deciding late (recording.maxDelayS) in the running daemon: a dense city grid
 * replayed from a file reaches the simulator as exactly the positions the policy chooses offline
 * from the same fixes, each once.
 */
import { describe, expect, it } from 'vitest';
import { createDecoder } from '../../src/gnss/decoder.js';
import type { Fix } from '../../src/fix/fix.js';
import { QualityGate } from '../../src/gnss/quality-gate.js';
import { RecordingPolicy } from '../../src/gnss/recording-policy.js';
import { driveText, generateDrive, planDenseGridRoute } from '../../src/sim/receiver/index.js';
import { seededRandom } from '../../src/sim/random.js';
import { waitFor } from '../helpers/wait.js';
import { receivedByTime, startReplayDaemon } from './daemon.js';

const RECORDING = { mode: 'path', maxDelayS: 20 };

describe('daemon with recording.maxDelayS', () => {
  it('delivers the positions the late policy chooses, in full, each once', async () => {
    const drive = { legs: planDenseGridRoute({ random: seededRandom(51), minutes: 6 }), seed: 51 };
    const gate = new QualityGate({});
    const fixes: Fix[] = [];
    const decoder = createDecoder({ onFix: (f) => void (gate.check(f) === undefined && fixes.push(f)) });
    decoder.pushChunk(Buffer.from(driveText(generateDrive(drive)), 'latin1'));
    decoder.flush();
    const policy = new RecordingPolicy(RECORDING as never);
    // What the policy records while the replay runs; what it still holds at the end waits for the stop.
    const expected = fixes.flatMap((f) => policy.offer(f)).map((r) => r.time);
    expect(expected.length).toBeGreaterThan(10);
    expect(expected.length).toBeLessThan(fixes.length / 5);

    const { sim, daemon } = await startReplayDaemon({ prefix: 'ta-e2e-late-', drive, replaySpeed: 0, config: { recording: RECORDING } });
    await waitFor('the chosen positions at the simulator', () => sim.events.size >= expected.length, {
      timeoutMs: 60_000,
      intervalMs: 200,
      detail: () => `${sim.events.size} of ${expected.length}\n${daemon.log()}`,
    });
    const byTime = receivedByTime(sim.events);
    expect([...byTime.keys()].sort((a, b) => a - b)).toEqual(expected);
    expect([...byTime.values()].every((ids) => ids.size === 1)).toBe(true);
  });
});
