import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/system/clock.js';

describe('ManualClock timers', () => {
  it('fire in order when advance() reaches them, each with the clock at its own time', () => {
    const clock = new ManualClock({ monotonicMs: 1000, wallMs: 5000 });
    const fired: [string, number, number][] = [];
    const at = (name: string) => () => fired.push([name, clock.monotonicMs(), clock.wallMs()]);
    clock.setTimeout(at('b'), 200);
    clock.setTimeout(at('a'), 100);
    const cancelled = clock.setTimeout(at('never'), 150);
    clock.clearTimeout(cancelled);
    clock.setTimeout(at('late'), 500);
    expect(clock.nextTimerAt()).toBe(1100);
    clock.advance(99);
    expect(fired).toEqual([]);
    clock.advance(201);
    expect(fired).toEqual([
      ['a', 1100, 5100],
      ['b', 1200, 5200],
    ]);
    expect(clock.monotonicMs()).toBe(1300);
    expect(clock.wallMs()).toBe(5300);
    expect(clock.nextTimerAt()).toBe(1500);
  });

  it('a timer set by a firing timer fires in the same advance when it falls within it', () => {
    const clock = new ManualClock();
    const fired: number[] = [];
    clock.setTimeout(() => {
      fired.push(clock.monotonicMs());
      clock.setTimeout(() => fired.push(clock.monotonicMs()), 50);
    }, 50);
    clock.advance(100);
    expect(fired).toEqual([50, 100]);
    expect(clock.nextTimerAt()).toBeUndefined();
  });
});
