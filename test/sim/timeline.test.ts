import { describe, expect, it } from 'vitest';
import type { RouteName } from '../../src/sim/faults.js';
import { RequestTimeline, type RequestSource } from '../../src/sim/timeline.js';
import { ManualClock } from '../../src/system/clock.js';

class Source implements RequestSource {
  #listeners = new Set<(route: RouteName, status: number | 'dropped') => void>();
  onRequest(l: (route: RouteName, status: number | 'dropped') => void): () => void {
    this.#listeners.add(l);
    return () => this.#listeners.delete(l);
  }
  answer(route: RouteName, status: number | 'dropped'): void {
    for (const l of this.#listeners) l(route, status);
  }
}

describe('request timeline (requests per kind per time bucket)', () => {
  it('counts answered and failed requests per route in the bucket of their moment', () => {
    const clock = new ManualClock();
    const source = new Source();
    const timeline = new RequestTimeline(source, { bucketMs: 1000, clock });
    source.answer('events', 200);
    source.answer('auth.password', 200);
    clock.advance(2500);
    source.answer('events', 503);
    source.answer('events', 'dropped');
    source.answer('auth.refresh', 204);
    const s = timeline.snapshot();
    expect(s.bucketMs).toBe(1000);
    expect(s.buckets.map((b) => b.atMs)).toEqual([0, 1000, 2000]);
    expect(s.buckets[0]!.ok).toMatchObject({ events: 1, 'auth.password': 1 });
    expect(s.buckets[1]!.ok.events + s.buckets[1]!.failed.events).toBe(0);
    expect(s.buckets[2]!.failed.events).toBe(2);
    expect(s.buckets[2]!.ok['auth.refresh']).toBe(1);
    timeline.stop();
    source.answer('events', 200);
    expect(timeline.snapshot().buckets.length).toBe(3);
  });
});
