import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import type { Clock } from './clock.js';

/**
 * A monotonic clock whose readings are comparable between processes of the same boot: the kernel's
 * CLOCK_MONOTONIC (process.hrtime) plus the boot id that tells boots apart. Token lifetimes are
 * measured with it from receipt (docs/platform-contract.md: the wall clock can be years off at boot), and
 * because the readings outlive the process, the daemon restarted by systemd or a CLI command
 * sharing the database knows exactly how old a stored access token is. After a reboot the boot
 * id differs and the age is unknown.
 */
export interface BootClock {
  readonly bootId: string;
  /** Milliseconds on a clock that only moves forward and is shared by every process of this boot. */
  nowMs(): number;
}

/** The kernel's monotonic clock; when the boot id is unreadable, a per-process id (ages then never carry over). */
export function systemBootClock(): BootClock {
  let bootId: string;
  try {
    bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    bootId = `process-${process.pid}-${randomUUID()}`;
  }
  // libuv's hrtime is CLOCK_MONOTONIC on Linux: system-wide, unaffected by NTP steps.
  return { bootId, nowMs: () => Number(process.hrtime.bigint() / 1_000_000n) };
}

/** For tests: the monotonic time of a (manual) Clock, under a fixed boot id. */
export function bootClockFrom(clock: Clock, bootId = 'test-boot'): BootClock {
  return { bootId, nowMs: () => clock.monotonicMs() };
}
