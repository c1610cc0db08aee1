import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log.js';
import { StartSpread } from '../../../src/platform/device/start-spread.js';
import { ManualClock } from '../../../src/system/clock.js';

describe('start-up spread (platform.startupJitterS)', () => {
  it('draws one delay in [0, window) per start', () => {
    const clock = new ManualClock();
    const at = (r: number) => new StartSpread({ windowS: 30, clock, logger: silentLogger(), random: () => r }).delayMs;
    expect(at(0)).toBe(0);
    expect(at(0.5)).toBe(15_000);
    expect(at(0.999999)).toBeLessThan(30_000);
    // A thousand gateways powered on together: no second holds more than a few of them.
    const perSecond = new Map<number, number>();
    for (let i = 0; i < 1000; i++) {
      const s = Math.floor(at(Math.random()) / 1000);
      perSecond.set(s, (perSecond.get(s) ?? 0) + 1);
    }
    expect(perSecond.size).toBe(30);
  });

  it('waits nothing once the drawn moment has passed, and stops waiting on abort', async () => {
    const clock = new ManualClock();
    const spread = new StartSpread({ windowS: 3600, clock, logger: silentLogger(), random: () => 0.5 });
    const ac = new AbortController();
    const waiting = spread.wait(ac.signal, 'token');
    ac.abort(new Error('stopping'));
    await expect(waiting).rejects.toThrow();
    clock.advance(1_800_000);
    await expect(spread.wait(new AbortController().signal, 'token')).resolves.toBeUndefined();
  });
});
