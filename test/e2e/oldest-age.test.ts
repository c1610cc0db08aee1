import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PlatformSimulator } from '../../src/sim/index.js';
import { driveText, generateDrive } from '../../src/sim/receiver/index.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait.js';
import { committedOutbox, startDaemon, writeConfig, stopWhenFinished } from './daemon.js';

/**
 * Through the real daemon: the age of the oldest undelivered fix keeps growing while
 * the receiver is silent (the replay has ended, as a parked receiver stops moving), measured
 * against the receiver's GNSS time advanced by the monotonic clock; with the daemon down, against
 * the host clock; and status says which. It was newest recorded minus oldest pending, frozen.
 */
interface Outbox {
  pending: number;
  oldestPendingAgeS?: number;
  oldestPendingAgeBasis?: string;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('status: the age of the oldest waiting fix', () => {
  it('grows against GNSS time while the receiver is silent, and against the host clock with the daemon down', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ta-e2e-oldest-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'pw' }] });
    const urls = await sim.start();
    cleanups.push(() => sim.stop());
    // Every event refused for now: the fixes stay in the outbox.
    sim.setFaults('events', { status503Rate: 1 });
    const drive = path.join(dir, 'drive.nmea');
    const epochs = generateDrive({ minutes: 1, seed: 6 });
    writeFileSync(drive, driveText(epochs));
    const configFile = writeConfig({ dir, urls, gnss: { replayFile: drive, replaySpeed: 0 } });
    const daemon = startDaemon(dir, configFile);
    stopWhenFinished(daemon, 'SIGKILL');
    const outbox = async (): Promise<{ outbox: Outbox; text: string }> => {
      const r = await runCli(['status', '--json', '--config', configFile]);
      const j = JSON.parse(r.stdout || '{}') as { outbox?: Outbox; receiver?: { link?: string } };
      return { outbox: j.outbox ?? { pending: 0 }, text: `${r.stdout}${r.stderr}\nlink ${j.receiver?.link ?? '?'}` };
    };
    let first: Outbox | undefined;
    let last = '';
    await waitFor(
      'the replay ended with fixes waiting',
      async () => {
        const r = await outbox();
        last = r.text;
        first = r.outbox;
        return r.outbox.pending > 10 && /link ended/.test(r.text);
      },
      { timeoutMs: 45_000, intervalMs: 500, detail: () => `${last}\n${daemon.log()}` },
    );
    expect(first?.oldestPendingAgeBasis).toBe('gnss');
    const a1 = first?.oldestPendingAgeS ?? 0;
    // The drive is a minute long: its first fix is at least that old on the receiver's clock.
    expect(a1).toBeGreaterThanOrEqual(55);
    let later: Outbox | undefined;
    await waitFor(
      'the age to go on growing with no new fix',
      async () => {
        later = (await outbox()).outbox;
        return (later.oldestPendingAgeS ?? 0) >= a1 + 2;
      },
      { timeoutMs: 20_000, intervalMs: 250 },
    );
    expect(later?.oldestPendingAgeBasis).toBe('gnss');
    const screen = await runCli(['status', '--config', configFile]);
    expect(screen.stdout).toMatch(/^outbox\s+pending \d+ \(oldest \d+ (s|min), GNSS time\)/m);

    daemon.child.kill('SIGTERM');
    await daemon.exited;
    const oldestFixTime = Math.min(...committedOutbox(dir).map((r) => r.time));
    const before = Date.now();
    const down = (await outbox()).outbox;
    expect(down.oldestPendingAgeBasis).toBe('host clock');
    expect(down.oldestPendingAgeS! * 1000).toBeGreaterThanOrEqual(before - oldestFixTime - 1000);
    expect(down.oldestPendingAgeS! * 1000).toBeLessThanOrEqual(Date.now() - oldestFixTime + 1000);
    const downScreen = await runCli(['status', '--config', configFile]);
    expect(downScreen.stdout).toMatch(/^outbox\s+pending \d+ \(oldest \S+ (s|min|h|d), host clock\)/m);
  }, 120_000);
});
