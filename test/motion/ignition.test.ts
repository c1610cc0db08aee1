import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { FileIgnitionInput, readIgnitionValue } from '../../src/motion/ignition.js';
import { ManualClock } from '../../src/system/clock.js';
import { tempDir } from '../helpers/tmp.js';
import { waitFor } from '../helpers/wait.js';

/** A value file (as sysfs or hwmon has it) and the input polling it on a manual clock. */
async function rig(initial: string) {
  const file = path.join(tempDir(), 'in_voltage0_raw');
  writeFileSync(file, initial);
  const clock = new ManualClock();
  const changes: { on: boolean; monoMs: number }[] = [];
  let reads = 0;
  const input = new FileIgnitionInput({
    file,
    onAbove: 9000,
    pollMs: 200,
    debounceS: 2,
    clock,
    timers: clock,
    logger: silentLogger(),
    read: async (f) => {
      try {
        return await readIgnitionValue(f);
      } finally {
        reads++;
      }
    },
    onChange: (on, monoMs) => changes.push({ on, monoMs }),
  });
  await input.start();
  onTestFinished(() => input.stop());
  /** Moves the clock `ms` in polls, each read done before the next. */
  const run = async (ms: number): Promise<void> => {
    for (let t = 0; t < ms; t += 200) {
      const before = reads;
      clock.advance(200);
      await waitFor('the poll', () => reads > before);
    }
  };
  return { file, clock, changes, run };
}

describe('ignition from a polled value file', () => {
  it('a cranking dip is not an engine stop; a stop held 2 s is one, dated when it was first read', async () => {
    const r = await rig('12600\n');
    expect(r.changes).toEqual([{ on: true, monoMs: 0 }]);
    await r.run(1000);
    writeFileSync(r.file, '7100\n'); // cranking: the supply sags for 0.6 s
    await r.run(600);
    writeFileSync(r.file, '13900\n');
    await r.run(3000);
    expect(r.changes).toHaveLength(1);
    const offAt = r.clock.monotonicMs();
    writeFileSync(r.file, '0\n');
    await r.run(3000);
    expect(r.changes).toHaveLength(2);
    expect(r.changes[1]!.on).toBe(false);
    // Within a poll of the change, not when the 2 s were up: well inside 3 s of the input's change.
    expect(r.changes[1]!.monoMs - offAt).toBeLessThanOrEqual(200);
  });

  it('an unreadable or non-numeric file keeps the state and says so once', async () => {
    const r = await rig('1\n');
    writeFileSync(r.file, 'garbage');
    await r.run(3000);
    expect(r.changes).toHaveLength(1);
    await expect(readIgnitionValue(r.file)).rejects.toThrow(/not a number/);
  });
});
