import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, rmSync, statSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { PlatformSimulator } from '../../src/sim/index.js';
import { driveText, generateDrive } from '../../src/sim/receiver/index.js';
import { requestSnapshot } from '../../src/status/status-client.js';
import { assessHealth } from '../../src/status/health.js';
import type { StatusSnapshot } from '../../src/status/snapshot.js';
import { startDaemon, writeConfig, stopWhenFinished } from './daemon.js';
import { waitFor } from '../helpers/wait.js';

/**
 * A real 8 MiB tmpfs as dataDir fills up while the platform (the simulator) is up.
 * Delivery goes on, status says FAILING "disk full", and once there is room again nothing is
 * thinned and every recorded fix arrives exactly once. Needs mount(2): root, as in CI.
 */
function mountTmpfs(dir: string, size: string): boolean {
  mkdirSync(dir, { recursive: true });
  return spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir], { stdio: 'ignore' }).status === 0;
}

/** Writes `file` until the file system refuses (ENOSPC), down to its last 4 KiB page. */
function fill(file: string): number {
  const fd = openSync(file, 'w');
  let written = 0;
  try {
    for (const size of [256 * 1024, 4096, 512]) {
      const chunk = Buffer.alloc(size, 0x5a);
      for (;;) {
        try {
          written += writeSync(fd, chunk);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
          break;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
  return written;
}

const probe = mkdtempSync(path.join(os.tmpdir(), 'ta-mount-probe-'));
const CAN_MOUNT = mountTmpfs(path.join(probe, 'm'), '1m');
if (CAN_MOUNT) spawnSync('umount', [path.join(probe, 'm')]);
rmSync(probe, { recursive: true, force: true });
if (!CAN_MOUNT) console.warn('full-disk.test.ts: skipped, mount -t tmpfs is not permitted here (CI runs it as root)');

describe.skipIf(!CAN_MOUNT)('a full disk while the platform is up (tmpfs)', () => {
  it('delivers on, says FAILING "disk full", thins nothing, and loses nothing', { timeout: 240_000 }, async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ta-fulldisk-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const data = path.join(dir, 'data');
    expect(mountTmpfs(data, '8m')).toBe(true);
    onTestFinished(() => {
      spawnSync('umount', ['-l', data]);
    });
    const sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'pw' }], seed: 11 });
    const urls = await sim.start();
    onTestFinished(() => sim.stop());
    const replayFile = path.join(dir, 'drive.nmea');
    writeFileSync(replayFile, driveText(generateDrive({ minutes: 4, hz: 10, seed: 5 })));
    const config = writeConfig({
      dir,
      urls,
      gnss: { replayFile, replaySpeed: 4 },
      storage: { commitIntervalMs: 200, minFreeBytes: 1024 * 1024, ballastBytes: 1024 * 1024 },
    });
    const daemon = startDaemon(dir, config);
    stopWhenFinished(daemon, 'SIGKILL');
    const socket = path.join(dir, 'status.sock');
    let last: StatusSnapshot | undefined;
    const status = async (): Promise<StatusSnapshot | undefined> => {
      if (daemon.child.exitCode !== null) throw new Error(`daemon exited ${daemon.child.exitCode}\n${daemon.log().slice(-3000)}`);
      last = await requestSnapshot(socket, 1000).catch(() => undefined);
      return last;
    };
    await waitFor('the ballast', async () => (await status())?.disk.ballast === true, { timeoutMs: 60_000, detail: daemon.log });
    expect(statSync(path.join(data, 'ballast')).size).toBe(1024 * 1024);

    // A backlog first (the platform answers 503), so that the full disk meets queued fixes.
    sim.setFaults('events', { status503Rate: 1 });
    await waitFor('a backlog', async () => ((await status())?.outbox.pending ?? 0) > 300, { timeoutMs: 60_000, detail: daemon.log });

    // Fill the disk: the next commits fail, the ballast goes, status says so.
    const filler = path.join(data, 'filler');
    fill(filler);
    await waitFor('disk full in status', async () => (await status())?.disk.full === true, { timeoutMs: 30_000, detail: daemon.log });
    expect(existsSync(path.join(data, 'ballast'))).toBe(false);
    const health = assessHealth(last!);
    expect(health.level).toBe('failing');
    expect(health.reasons.join('; ')).toMatch(/disk full/);

    // The platform comes back while the disk is still full: delivery goes on.
    const sentWhenFull = last!.outbox.sentTotal ?? 0;
    sim.setFaults('events', undefined);
    await waitFor(
      'delivery while the disk is full',
      async () => {
        const s = await status();
        return s !== undefined && (s.outbox.sentTotal ?? 0) > sentWhenFull + 300 && s.disk.full === true;
      },
      { timeoutMs: 60_000, detail: daemon.log },
    );
    // Fill again whatever the deletes of delivered rows gave back to the file system, and check the
    // daemon still runs and delivers.
    const sentStillFull = last!.outbox.sentTotal ?? 0;
    fill(`${filler}2`);
    await waitFor('delivery on a disk filled again', async () => ((await status())?.outbox.sentTotal ?? 0) > sentStillFull + 50, {
      timeoutMs: 60_000,
      detail: daemon.log,
    });
    expect(last!.disk.full).toBe(true);

    // Room again: the ballast comes back, status is no longer failing for the disk.
    unlinkSync(filler);
    unlinkSync(`${filler}2`);
    await waitFor(
      'room again',
      async () => {
        const s = await status();
        return s !== undefined && s.disk.full !== true && s.disk.ballast === true;
      },
      { timeoutMs: 30_000, detail: daemon.log },
    );

    // The drive ends; everything recorded arrives, once, and nothing was thinned.
    await waitFor(
      'the drive to end and the queue to drain',
      async () => {
        const s = await status();
        return s !== undefined && s.receiver?.link === 'ended' && s.outbox.pending === 0 && s.disk.heldInMemory === undefined;
      },
      { timeoutMs: 180_000, detail: daemon.log },
    );
    const s = last!;
    const recorded = s.outbox.recorded ?? 0;
    const delivered = sim.events.size;
    const deadLettered = s.outbox.deadLetters;
    const lost = recorded - delivered - deadLettered;
    console.log(
      `full disk (8 MiB tmpfs): recorded ${recorded}, delivered ${delivered}, dead-lettered ${deadLettered}, thinned ${s.outbox.thinned}, lost ${lost}, duplicates ${sim.stats.duplicates}, disk-full episodes ${daemon.log().match(/disk full: releasing/g)?.length ?? 0}`,
    );
    expect(recorded).toBeGreaterThan(1000);
    expect(s.outbox.thinned).toBe(0);
    expect(deadLettered).toBe(0);
    expect(lost).toBe(0);
    expect(assessHealth(s).reasons.join('; ')).not.toMatch(/disk/);
    daemon.child.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);
  });
});
