import { describe, expect, it } from 'vitest';
import { WireCounter } from '../../src/platform/transport/wire-counter.js';
import { DaemonStatusProvider } from '../../src/status/daemon-provider.js';
import { headerIndexerNotes } from '../../src/status/platform-link.js';
import { renderStatus } from '../../src/terminal/status-screen.js';
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

  it('a host the HTTP/2 header indexer was turned off for is a note in status, naming the host and why', () => {
    const clock = new ManualClock();
    const wire = new WireCounter(clock);
    const p = () =>
      new DaemonStatusProvider({
        clock,
        dataDir: tempDir(),
        startedMonoMs: 0,
        notes: () => headerIndexerNotes(wire.snapshot().headerIndexerOff),
      });
    expect(p().snapshot()).not.toHaveProperty('notes');
    wire.headerIndexerOff('https://planning.example:443', 'the server sent GOAWAY COMPRESSION_ERROR');
    const s = p().snapshot();
    expect(s.notes).toEqual([
      'HTTP/2 header indexer off for https://planning.example:443 until restart (the server sent GOAWAY COMPRESSION_ERROR): the bearer goes with every request',
    ]);
    expect(renderStatus(s, { color: false, nowMs: clock.wallMs() })).toContain(
      'HTTP/2 header indexer off for https://planning.example:443',
    );
  });
});
