import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { AnswerPacer } from '../../src/socket/answer-pacer.js';

describe('AnswerPacer', () => {
  it('lets a burst through, then one per 1/perS, first come first served; a client gone gives its turn away', async () => {
    vi.useFakeTimers();
    onTestFinished(() => void vi.useRealTimers());
    const pacer = new AnswerPacer(10, 3, { monotonicMs: () => Date.now() });
    const order: string[] = [];
    const alive = new Set(['a', 'b', 'c', 'd', 'e', 'f', 'g']);
    const turns = [...alive].map((name) => pacer.turn(() => alive.has(name)).then((ok) => order.push(`${name}:${ok}`)));
    await vi.advanceTimersByTimeAsync(0);
    expect(order).toEqual(['a:true', 'b:true', 'c:true']);
    expect(pacer.waiting).toBe(4);
    alive.delete('e'); // hangs up while waiting
    await vi.advanceTimersByTimeAsync(100);
    // e is gone: found at d's turn, it spends nothing; f has the next turn, 100 ms later.
    expect(order).toEqual(['a:true', 'b:true', 'c:true', 'd:true', 'e:false']);
    await vi.advanceTimersByTimeAsync(99);
    expect(order).toHaveLength(5);
    await vi.advanceTimersByTimeAsync(1);
    expect(order).toEqual(['a:true', 'b:true', 'c:true', 'd:true', 'e:false', 'f:true']);
    pacer.stop();
    await Promise.all(turns);
    expect(order.at(-1)).toBe('g:false');
  });

  it('refills no more than the burst while nobody asks', async () => {
    vi.useFakeTimers();
    onTestFinished(() => void vi.useRealTimers());
    const pacer = new AnswerPacer(10, 2, { monotonicMs: () => Date.now() });
    await vi.advanceTimersByTimeAsync(60_000);
    let granted = 0;
    for (let i = 0; i < 5; i++) void pacer.turn(() => true).then((ok) => (granted += ok ? 1 : 0));
    await vi.advanceTimersByTimeAsync(0);
    expect(granted).toBe(2);
    pacer.stop();
  });
});
