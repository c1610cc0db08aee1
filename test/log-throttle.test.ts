import { describe, expect, it } from 'vitest';
import { LogThrottle } from '../src/log-throttle.js';
import { CommitHealth } from '../src/store/outbox/commit-health.js';
import { OversizedAnswers } from '../src/upload/oversized-answers.js';
import { ManualClock } from '../src/system/clock.js';
import { captureLogger } from './helpers/capture-logger.js';

function linesWith(text: string, what: string): string[] {
  return text.split('\n').filter((l) => l.includes(what));
}

/** Seconds (since the first) at which occurrences once a second for `seconds` are logged. */
function loggedSeconds(throttle: LogThrottle, clock: ManualClock, seconds: number): number[] {
  const logged: number[] = [];
  for (let s = 0; s < seconds; s++) {
    if (throttle.occurred(clock.monotonicMs())) logged.push(s);
    clock.advance(1000);
  }
  return logged;
}

describe('LogThrottle: log once, then at a decaying rate', () => {
  it('logs the first at once, then after 1, 2, 4 ... min, at most hourly: 7 lines for 7,200 repeats in 2 h', () => {
    const clock = new ManualClock();
    const throttle = new LogThrottle();
    const logged = loggedSeconds(throttle, clock, 7200);
    expect(logged).toEqual([0, 60, 180, 420, 900, 1860, 3780]);
    expect(throttle.repeats).toBe(7199);
    // The gap stays at the hourly ceiling.
    expect(loggedSeconds(throttle, clock, 3600)).toEqual([180]);
  });

  it('a new run after reset() is logged at once, with the first gap again', () => {
    const clock = new ManualClock();
    const throttle = new LogThrottle({ firstGapMs: 10_000, maxGapMs: 40_000 });
    expect(loggedSeconds(throttle, clock, 100)).toEqual([0, 10, 30, 70]);
    throttle.reset();
    expect(throttle.repeats).toBe(0);
    expect(loggedSeconds(throttle, clock, 100)).toEqual([0, 10, 30, 70]);
  });

  it('is used by the outbox commit health and the oversized answers alike', () => {
    const clock = new ManualClock();
    const commits = captureLogger();
    const health = new CommitHealth(clock, commits.logger);
    const answers = captureLogger();
    const oversized = new OversizedAnswers(answers.logger, clock);
    for (let s = 0; s < 600; s++) {
      health.failed(Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_WRITE' }), 10);
      oversized.note(200, { limitBytes: 1_048_576, declaredBytes: 1_300_000 });
      clock.advance(1000);
    }
    // 0, 60, 180, 420 s: four lines each for 600 occurrences.
    expect(linesWith(commits.text(), 'outbox commit failed')).toHaveLength(4);
    expect(linesWith(answers.text(), 'larger than platform.maxResponseBytes')).toHaveLength(4);
    expect(oversized.count).toBe(600);
    // A different failure is a new run: logged at once.
    health.failed(Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }), 10);
    expect(linesWith(commits.text(), 'outbox commit failed')).toHaveLength(5);
  });
});
