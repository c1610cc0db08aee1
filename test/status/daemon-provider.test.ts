import { describe, expect, it } from 'vitest';
import { DaemonStatusProvider } from '../../src/status/daemon-provider.js';
import { ManualClock } from '../../src/system/clock.js';
import { tempDir } from '../helpers/tmp.js';

describe('DaemonStatusProvider', () => {
  const provider = (outbox: { pending: number; oldestPendingAgeS?: number }) =>
    new DaemonStatusProvider({
      clock: new ManualClock(),
      dataDir: tempDir(),
      startedMonoMs: 0,
      outbox: () => ({ sentToday: 0, thinned: 0, deadLetters: 0, ...outbox }),
    });

  it('no oldest pending age when nothing is pending (a delivered row not yet deleted is not a backlog)', () => {
    expect(provider({ pending: 0, oldestPendingAgeS: 68 }).snapshot().outbox).not.toHaveProperty('oldestPendingAgeS');
    expect(provider({ pending: 21, oldestPendingAgeS: 68 }).snapshot().outbox.oldestPendingAgeS).toBe(68);
  });
});
