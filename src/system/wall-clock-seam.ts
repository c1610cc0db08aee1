import { readFileSync } from 'node:fs';
import type { Clock } from './clock.js';

/**
 * TEST SEAM, for end-to-end tests of a wrong system clock (issue 22.8), read by the composition root
 * (src/agent.ts) only. A gateway without a real-time clock boots at 1970, one with a bad RTC can be
 * years ahead, and NTP or GNSS later steps the clock; CI cannot change the system clock (root, and
 * every process on the machine would see it). When this variable names a file, the daemon's wall
 * clock is the system's plus the milliseconds written in that file, re-read at most every 100 ms of
 * the monotonic clock: a test starts the real daemon years off and then "sets the clock" by writing
 * 0. The monotonic clock is untouched, as a real clock step leaves it. Ignored with
 * NODE_ENV=production (the service); the daemon logs a warning at start when it is set. TLS certificate checks keep the real clock (a
 * test serves a certificate outside its dates instead).
 */
export const WALL_OFFSET_FILE_ENV = 'TELEMATICS_AGENT_TEST_WALL_OFFSET_FILE';

const REREAD_MS = 100;

/** `base` with its wall clock moved by the offset in `file` (unreadable or not a number: 0). */
export function offsetWallClock(base: Clock, file: string): Clock {
  let offset = 0;
  let readAt = -Infinity;
  const current = (): number => {
    const now = base.monotonicMs();
    if (now - readAt >= REREAD_MS) {
      readAt = now;
      try {
        const v = Number(readFileSync(file, 'utf8').trim());
        offset = Number.isFinite(v) ? v : 0;
      } catch {
        offset = 0;
      }
    }
    return offset;
  };
  return { monotonicMs: () => base.monotonicMs(), wallMs: () => base.wallMs() + current() };
}

/**
 * The daemon's clock: the system's, or under the test seam the system's with its wall clock offset.
 * Never under the service (the unit sets NODE_ENV=production): a leftover drop-in naming the
 * variable is reported as ignored, not obeyed.
 */
export function daemonClock(base: Clock, env: NodeJS.ProcessEnv): { clock: Clock; seam?: string; ignored?: string } {
  const file = env[WALL_OFFSET_FILE_ENV];
  if (file === undefined || file === '') return { clock: base };
  if (env.NODE_ENV === 'production') return { clock: base, ignored: file };
  return { clock: offsetWallClock(base, file), seam: file };
}
