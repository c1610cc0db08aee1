import { expect } from 'vitest';
import type { Fix } from '../../src/fix/fix.js';
import { createDecoder } from '../../src/gnss/decoder.js';
import { QualityGate } from '../../src/gnss/quality-gate.js';
import { RecordingPolicy, type RecordingPolicyOptions } from '../../src/gnss/recording-policy.js';
import { driveText, generateDrive, type DriveOptions } from '../../src/sim/receiver/index.js';
import { waitFor } from '../helpers/wait.js';
import { receivedByTime, type ReplayDaemon } from './daemon.js';

/**
 * The drive through the decoder, the quality gate and a recording policy, as the daemon takes it:
 * the fixes that pass the gate, and the times of the positions the policy records while they come
 * (what it still holds at the end waits for the daemon's stop).
 */
export function recordedOffline(drive: DriveOptions, recording: Partial<RecordingPolicyOptions> = {}): { fixes: Fix[]; times: number[] } {
  const gate = new QualityGate({});
  const fixes: Fix[] = [];
  const decoder = createDecoder({ onFix: (f) => void (gate.check(f) === undefined && fixes.push(f)) });
  decoder.pushChunk(Buffer.from(driveText(generateDrive(drive)), 'latin1'));
  decoder.flush();
  const policy = new RecordingPolicy(recording);
  return { fixes, times: fixes.flatMap((f) => policy.offer(f)).map((r) => r.time) };
}

/** The simulator receives exactly the positions of `times`, each once. */
export async function expectDeliveredOnce(
  { sim, daemon }: Pick<ReplayDaemon, 'sim' | 'daemon'>,
  times: number[],
  timeoutMs: number,
): Promise<void> {
  await waitFor('the recorded positions at the simulator', () => sim.events.size >= times.length, {
    timeoutMs,
    intervalMs: 200,
    detail: () => `${sim.events.size} of ${times.length}\n${daemon.log()}`,
  });
  const byTime = receivedByTime(sim.events);
  expect([...byTime.keys()].sort((a, b) => a - b)).toEqual(times);
  expect([...byTime.values()].every((ids) => ids.size === 1)).toBe(true);
}
