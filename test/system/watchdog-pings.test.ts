import { describe, expect, it, onTestFinished, vi } from 'vitest';
import type { OutboxCommitState } from '../../src/store/outbox/outbox.js';
import type { SdNotify } from '../../src/system/sd-notify.js';
import { WatchdogPings } from '../../src/system/watchdog-pings.js';
import { captureLogger } from '../helpers/capture-logger.js';
import { tempDir } from '../helpers/tmp.js';

/** The watchdog feeds systemd unless a restart would help: not for a full disk, not for a read-only card. */
function run(state: OutboxCommitState, readOnly: boolean): { sent: string[][]; log: string } {
  vi.useFakeTimers();
  onTestFinished(() => void vi.useRealTimers());
  const sent: string[][] = [];
  const notify = { watchdogIntervalMs: () => 1000, send: (m: string[]) => sent.push(m) } as unknown as SdNotify;
  const { logger, text } = captureLogger();
  const pings = new WatchdogPings({ notify, logger, dataDir: tempDir(), commitState: () => state, readOnly: () => readOnly });
  pings.start();
  onTestFinished(() => pings.stop());
  vi.advanceTimersByTime(3500);
  return { sent, log: text() };
}

const failing = (code: string): OutboxCommitState =>
  ({
    buffered: 120,
    bound: 1000,
    lowDisk: false,
    lastCommitError: { code, message: 'x' },
    commitFailingSinceMonoMs: 0,
  }) as OutboxCommitState;

describe('watchdog pings', () => {
  it('on a read-only card: fed, with STATUS naming it and what is held (a restart would drop it)', () => {
    const { sent } = run(failing('SQLITE_READONLY'), true);
    expect(sent.length).toBe(3);
    expect(sent[0]).toEqual(['WATCHDOG=1', 'STATUS=read-only data directory: 120 fixes held in memory']);
    expect(sent[1]).toEqual(['WATCHDOG=1']);
  });

  it('commits failing for another reason on a writable card: withheld, so that systemd restarts the agent', () => {
    const { sent, log } = run(failing('SQLITE_IOERR_WRITE'), false);
    expect(sent).toEqual([]);
    expect(log).toMatch(/withholding the watchdog ping/);
  });
});
