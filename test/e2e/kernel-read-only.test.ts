import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { PlatformSimulator } from '../../src/sim/index.js';
import { driveText, generateDrive } from '../../src/sim/receiver/index.js';
import { requestSnapshot } from '../../src/status/status-client.js';
import { RUN_DIR_ENV } from '../../src/socket/path.js';
import { assessHealth } from '../../src/status/health.js';
import type { StatusSnapshot } from '../../src/status/snapshot.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait.js';
import { canMountExt4Card, ext4Card } from '../helpers/mount.js';
import { startDaemon, writeConfig, type Daemon } from './daemon.js';

/**
 * A card the kernel makes read-only (ext4 errors=remount-ro, Raspberry Pi OS's root): the
 * superblock says emergency_ro while access(2) and statvfs still say writable. Before, the daemon
 * exited 2 at start with chown advice (a restart loop), status said SQLITE_IOERR_WRITE mid-run and
 * doctor passed. And agent.db taken by a directory: exit 2 with chown advice; now its own name.
 */
const CAN_EXT4 = canMountExt4Card('kernel-read-only.test.ts');

async function setUp(minutes: number) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ta-kernel-ro-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'pw' }], seed: 28 });
  const urls = await sim.start();
  onTestFinished(() => sim.stop());
  const replayFile = path.join(dir, 'drive.nmea');
  writeFileSync(replayFile, driveText(generateDrive({ minutes, hz: 10, seed: 28 })));
  const config = writeConfig({ dir, urls, gnss: { replayFile, replaySpeed: 2 }, storage: { minFreeBytes: 1024 * 1024 } });
  const run = path.join(dir, 'run');
  mkdirSync(run);
  return { dir, sim, config, env: { [RUN_DIR_ENV]: run } };
}

function watch(dir: string, daemon: Daemon): () => Promise<StatusSnapshot | undefined> {
  onTestFinished(async () => {
    if (daemon.child.exitCode === null && daemon.child.signalCode === null) {
      daemon.child.kill('SIGKILL');
      await daemon.exited;
    }
  });
  return async () => {
    if (daemon.child.exitCode !== null) throw new Error(`daemon exited ${daemon.child.exitCode}\n${daemon.log().slice(-3000)}`);
    return requestSnapshot(path.join(dir, 'status.sock'), 1000).catch(() => undefined);
  };
}

describe.skipIf(!CAN_EXT4)('a card the kernel made read-only (loop-mounted ext4, errors=remount-ro, trigger_fs_error)', () => {
  it('started on it: runs from memory naming a read-only card, and doctor names the kernel', { timeout: 240_000 }, async () => {
    const { dir, sim, config, env } = await setUp(1);
    const card = ext4Card(dir, 'data', 32)!;
    onTestFinished(() => card.unmount());
    expect((await runCli(['register', '--config', config], { timeoutMs: 60_000 })).code).toBe(0);
    card.failStorage();

    const doctor = await runCli(['doctor', '--config', config], { timeoutMs: 60_000 });
    expect(doctor.stdout).toMatch(/^FAIL\s+data directory\s+the kernel made the data directory's filesystem read-only/m);

    const daemon = startDaemon(dir, config, env);
    const status = watch(dir, daemon);
    let last: StatusSnapshot | undefined;
    await waitFor('recording on the card the kernel made read-only', async () => ((last = await status())?.outbox.recorded ?? 0) > 50, {
      timeoutMs: 60_000,
      detail: daemon.log,
    });
    await waitFor('delivery from memory', () => sim.events.size > 20, { timeoutMs: 60_000, detail: daemon.log });
    expect(last!.disk.readOnly).toBe(true);
    expect(assessHealth(last!).reasons[0]).toMatch(/^read-only data directory: /);
    expect(daemon.log()).not.toMatch(/DATABASE_UNOPENABLE|chown/);
    daemon.child.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);
  });

  it('going read-only under a running daemon: status names a read-only card, not an I/O error', { timeout: 240_000 }, async () => {
    const { dir, config, env } = await setUp(2);
    const card = ext4Card(dir, 'data', 32)!;
    onTestFinished(() => card.unmount());
    const daemon = startDaemon(dir, config, env);
    const status = watch(dir, daemon);
    await waitFor('recording', async () => ((await status())?.outbox.recorded ?? 0) > 20, { timeoutMs: 60_000, detail: daemon.log });
    card.failStorage();
    let last: StatusSnapshot | undefined;
    await waitFor(
      'the read-only card named',
      async () => (last = await status())?.disk.readOnly === true && last?.disk.commitFailing !== undefined,
      {
        timeoutMs: 60_000,
        detail: daemon.log,
      },
    );
    const reasons = assessHealth(last!).reasons.join('; ');
    expect(reasons).toMatch(/read-only data directory: the data directory's filesystem is read-only/);
    expect(reasons).not.toMatch(/I\/O errors/);
    expect(daemon.child.exitCode).toBe(null);
  });
});

describe('agent.db taken by a directory', () => {
  it('the daemon stays up on memory, status and doctor name it', { timeout: 240_000 }, async () => {
    const { dir, sim, config, env } = await setUp(1);
    mkdirSync(path.join(dir, 'data', 'agent.db'), { recursive: true });
    const daemon = startDaemon(dir, config, env);
    const status = watch(dir, daemon);
    let last: StatusSnapshot | undefined;
    await waitFor('recording into memory', async () => ((last = await status())?.outbox.recorded ?? 0) > 20, {
      timeoutMs: 60_000,
      detail: daemon.log,
    });
    await waitFor('delivery from memory', () => sim.events.size > 10, { timeoutMs: 60_000, detail: daemon.log });
    expect(assessHealth(last!).reasons[0]).toMatch(/^database unusable: .*agent\.db is a directory, not the database file/);
    expect(daemon.log()).not.toMatch(/chown/);
    const doctor = await runCli(['doctor', '--config', config], { timeoutMs: 60_000 });
    expect(doctor.stdout).toMatch(/^FAIL\s+data directory\s+database unusable: .*agent\.db is a directory/m);
    expect(daemon.child.exitCode).toBe(null);
    daemon.child.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);
  });
});
