import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/system/clock.js';
import { daemonClock, WALL_OFFSET_FILE_ENV } from '../../src/system/wall-clock-seam.js';
import { tempDir } from '../helpers/tmp.js';

describe('the wall-clock test seam', () => {
  it('offsets the wall clock by the file it names, re-read as the file changes; the monotonic clock stays', () => {
    const file = path.join(tempDir(), 'offset');
    writeFileSync(file, String(-1000 * 86_400_000));
    const base = new ManualClock({ wallMs: 1_800_000_000_000, monotonicMs: 5_000 });
    const { clock, seam } = daemonClock(base, { [WALL_OFFSET_FILE_ENV]: file });
    expect(seam).toBe(file);
    expect(clock.wallMs()).toBe(1_800_000_000_000 - 1000 * 86_400_000);
    expect(clock.monotonicMs()).toBe(5_000);
    writeFileSync(file, '0');
    base.advance(100);
    expect(clock.wallMs()).toBe(base.wallMs());
  });

  it('is ignored under the service (NODE_ENV=production), and says so', () => {
    const base = new ManualClock({ wallMs: 1_800_000_000_000, monotonicMs: 0 });
    const chosen = daemonClock(base, { [WALL_OFFSET_FILE_ENV]: '/tmp/x', NODE_ENV: 'production' });
    expect(chosen.clock).toBe(base);
    expect(chosen.seam).toBeUndefined();
    expect(chosen.ignored).toBe('/tmp/x');
  });

  it('is off when the variable is unset or empty', () => {
    const base = new ManualClock();
    expect(daemonClock(base, {})).toEqual({ clock: base });
    expect(daemonClock(base, { [WALL_OFFSET_FILE_ENV]: '' })).toEqual({ clock: base });
  });
});
