import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PlatformSimulator } from '../../src/sim/index.js';
import { driveText, generateDrive } from '../../src/sim/receiver/index.js';
import { eventIdBytes, formatUuid } from '../../src/store/event-id.js';
import { requestSnapshot } from '../../src/status/status-client.js';
import { tempDir } from '../helpers/tmp.js';
import { DEVICE, committedOutbox, receivedByTime, startDaemon, writeConfig, stopWhenFinished } from './daemon.js';
import { waitFor } from '../helpers/wait.js';

const KILLS = 30;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('crash safety: kill -9 at random moments while ingesting and uploading', () => {
  it(`every committed fix is delivered, none under two ids (${KILLS} kills)`, { timeout: 600_000 }, async () => {
    const dir = tempDir('ta-crash-');
    const sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'pw' }], seed: 7 });
    const urls = await sim.start();
    cleanups.push(() => sim.stop());
    // Some uploads fail too, so that kills also land between a failure and its retry.
    sim.setFaults('events', { status503Rate: 0.05 });
    const replayFile = path.join(dir, 'drive.nmea');
    writeFileSync(replayFile, driveText(generateDrive({ minutes: 2, hz: 10, seed: 3 })));
    // Replayed 20x faster than recorded: a restart reads the same drive again, with the same fix times.
    const config = writeConfig({ dir, urls, gnss: { replayFile, replaySpeed: 20 }, storage: { commitIntervalMs: 100 } });
    let seed = 12345;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const committed = new Map<string, number>();
    let killedWhileCommitted = 0;
    for (let k = 0; k < KILLS; k++) {
      const d = startDaemon(dir, config);
      await new Promise((r) => setTimeout(r, 300 + random() * 2200));
      d.child.kill('SIGKILL');
      const { signal, code } = await d.exited;
      expect(signal ?? code, d.log().slice(-2000)).toBe('SIGKILL');
      const rows = committedOutbox(dir);
      if (rows.length > 0) killedWhileCommitted++;
      for (const r of rows) committed.set(r.id, r.time);
    }
    // The kills hit a daemon with queued fixes, not only an idle one.
    expect(killedWhileCommitted).toBeGreaterThan(KILLS / 3);

    sim.setFaults('events', undefined);
    const final = startDaemon(dir, config);
    stopWhenFinished(final, 'SIGKILL');
    const socket = path.join(dir, 'status.sock');
    await waitFor(
      'the final run to drain everything',
      async () => {
        if (final.child.exitCode !== null) throw new Error(final.log());
        const s = await requestSnapshot(socket, 1000).catch(() => undefined);
        return s !== undefined && s.receiver?.link === 'ended' && s.outbox.pending === 0 && (s.outbox.recorded ?? 0) > 0;
      },
      { timeoutMs: 300_000, detail: final.log },
    );
    final.child.kill('SIGTERM');
    expect((await final.exited).code).toBe(0);

    for (const [id, time] of committed) {
      expect(sim.events.has(id), `committed fix ${new Date(time).toISOString()} (${id}) was not delivered`).toBe(true);
    }
    for (const [t, ids] of receivedByTime(sim.events)) {
      expect(ids.size, `fix time ${new Date(t).toISOString()} arrived under ${ids.size} ids`).toBe(1);
      expect([...ids][0]).toBe(formatUuid(eventIdBytes(DEVICE.externalSystemId, DEVICE.externalDeviceId, t)));
    }
    expect(committed.size).toBeGreaterThan(0);
  });
});
