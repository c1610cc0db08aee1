import { describe, expect, it } from 'vitest';
import { drainLine } from '../../src/terminal/status-screen.js';

describe('status: the drain line', () => {
  const d = { window: 11, ceiling: 31, limit: 'latency', ratePerS: 12.5, baseLatencyMs: 310, latencyMs: 460 };
  it('says the backlog, the rate, the time to go and why it is no faster', () => {
    const line = drainLine(7500, d)!;
    expect(line).toContain('7500 to send at 12.5/s');
    expect(line).toContain('about 10 min to go');
    expect(line).toContain('11 of 31 in flight');
    expect(line).toContain('the platform answers slower');
    expect(line).toContain('latency 460 ms (base 310)');
    expect(drainLine(7500, { ...d, limit: 'pushback' })).toContain('pushes back (429/503)');
    expect(drainLine(7500, { ...d, limit: 'ceiling' })).toContain('upload.concurrency');
    expect(drainLine(7500, { ...d, ratePerS: 0 })).toContain('not moving');
    // A window of 11.6 is 11 requests; below one it is a pace, never "0.05 of 31 in flight".
    expect(drainLine(7500, { ...d, window: 11.6 })).toContain('11 of 31 in flight');
    expect(drainLine(7500, { ...d, window: 0.05, limit: 'pushback' })).toContain('1 request per 20 round trips, slowed');
  });
  it('no line without a backlog', () => {
    expect(drainLine(1, d)).toBeUndefined();
    expect(drainLine(500, undefined)).toBeUndefined();
  });
});
