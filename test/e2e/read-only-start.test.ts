import BetterSqlite3 from 'better-sqlite3';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
import { startDaemon, writeConfig, type Daemon } from './daemon.js';
import { canMountTmpfs, sh } from '../helpers/mount.js';

/**
 * The daemon started on a card that is already read-only. Before: `run` exited 2 on
 * its lock (`attempt to write a readonly database`) and systemd restarted it every 5 s, recording
 * nothing. Now it keeps running from memory, delivers with the stored token and registration, says
 * FAILING "read-only data directory", keeps a second daemon away with the runtime directory's lock,
 * and stores what it holds once the card is remounted read-write, without a restart.
 *
 * The card is a real tmpfs remounted read-only (root, as in CI): access(2) and every write say
 * EROFS for root too, which mode bits (0555/0444) would not.
 */
const CAN_MOUNT = canMountTmpfs('read-only-start.test.ts', { remount: true });

interface Card {
  dir: string;
  data: string;
  env: NodeJS.ProcessEnv;
}

function card(): Card {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ta-rostart-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const data = path.join(dir, 'data');
  mkdirSync(data);
  expect(sh('mount', ['-t', 'tmpfs', '-o', 'size=16m,mode=0700', 'tmpfs', data])).toBe(true);
  onTestFinished(() => void sh('umount', ['-l', data]));
  const run = path.join(dir, 'run');
  mkdirSync(run);
  return { dir, data, env: { [RUN_DIR_ENV]: run } };
}

function stopOnFinish(d: Daemon): void {
  onTestFinished(async () => {
    if (d.child.exitCode === null && d.child.signalCode === null) {
      d.child.kill('SIGKILL');
      await d.exited;
    }
  });
}

describe.skipIf(!CAN_MOUNT)('started on a read-only card, a real tmpfs remounted read-only', () => {
  it(
    'runs from memory, delivers with the stored token, keeps a second daemon away, and stores what it holds once writable',
    { timeout: 300_000 },
    async () => {
      const { dir, data, env } = card();
      const sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'pw' }], seed: 22 });
      const urls = await sim.start();
      onTestFinished(() => sim.stop());
      const replayFile = path.join(dir, 'drive.nmea');
      writeFileSync(replayFile, driveText(generateDrive({ minutes: 3, hz: 10, seed: 10 })));
      const config = writeConfig({ dir, urls, gnss: { replayFile, replaySpeed: 2 }, storage: { minFreeBytes: 1024 * 1024 } });

      // Registered and a token pair stored while the card was writable, then the card goes read-only.
      expect((await runCli(['register', '--config', config], { timeoutMs: 60_000 })).code).toBe(0);
      const generationBefore = storedTokenGeneration(data);
      expect(sh('mount', ['-o', 'remount,ro', data])).toBe(true);

      // status without a daemon, as root, reads the card and says what it holds.
      const before = await runCli(['status', '--config', config]);
      expect(before.stdout).not.toMatch(/cannot read|never registered/);
      expect(before.stdout).toMatch(/read-only data directory/);

      const grantsBefore = sim.stats.passwordGrants;
      const daemon = startDaemon(dir, config, env);
      stopOnFinish(daemon);
      const socket = path.join(dir, 'status.sock');
      let last: StatusSnapshot | undefined;
      const status = async (): Promise<StatusSnapshot | undefined> => {
        if (daemon.child.exitCode !== null) throw new Error(`daemon exited ${daemon.child.exitCode}\n${daemon.log().slice(-3000)}`);
        last = await requestSnapshot(socket, 1000).catch(() => undefined);
        return last;
      };
      // A backlog held in memory first (the platform answers 503), then delivered from memory.
      sim.setFaults('events', { status503Rate: 1 });
      await waitFor('fixes held in memory', async () => ((await status())?.disk.heldInMemory ?? 0) > 200, {
        timeoutMs: 60_000,
        detail: daemon.log,
      });
      expect(last!.disk.readOnly).toBe(true);
      expect(last!.registration.deviceUUID).toBeDefined();
      const health = assessHealth(last!);
      expect(health.level).toBe('failing');
      expect(health.reasons.join('; ')).toMatch(
        /^read-only data directory: the data directory's filesystem is read-only, \d+ fixes held in memory/m,
      );
      sim.setFaults('events', undefined);
      await waitFor('delivery from memory on the read-only card', () => sim.events.size > 300, { timeoutMs: 60_000, detail: daemon.log });
      // The access token stops working: the daemon refreshes, the server rotates the card's refresh
      // token away, and the new pair waits in memory until the card takes it.
      const refreshesBefore = sim.stats.refreshes;
      sim.expireAccessTokens();
      await waitFor('a refresh on the read-only card', () => sim.stats.refreshes > refreshesBefore, {
        timeoutMs: 60_000,
        detail: daemon.log,
      });

      // A second daemon on the same card stops at the runtime directory's lock.
      const second = startDaemon(dir, config, env);
      stopOnFinish(second);
      const secondExit = await second.exited;
      expect(secondExit.code).toBe(2);
      expect(second.log()).toMatch(/another agent is running on .* \(pid \d+\)/);

      // doctor names the card.
      const doctor = await runCli(['doctor', '--config', config], { timeoutMs: 60_000 });
      expect(doctor.stdout).toMatch(/^FAIL\s+data directory\s+the data directory's filesystem is read-only/m);

      // Writable again: the same process takes the card's lock, stores what it holds, goes on.
      const remountedAt = performance.now();
      expect(sh('mount', ['-o', 'remount,rw', data])).toBe(true);
      await waitFor('the card taken read-write', () => /stored the fixes held while the data directory was read-only/.test(daemon.log()), {
        timeoutMs: 30_000,
        detail: daemon.log,
      });
      const recoverS = (performance.now() - remountedAt) / 1000;
      expect(daemon.log()).toMatch(/writable again: reopening the database read-write/);

      await waitFor(
        'the drive to end and the queue to drain',
        async () => {
          const s = await status();
          return s !== undefined && s.receiver?.link === 'ended' && s.outbox.pending === 0 && s.disk.heldInMemory === undefined;
        },
        { timeoutMs: 180_000, detail: daemon.log },
      );
      const recorded = generateDrive({ minutes: 3, hz: 10, seed: 10 }).truth.length;
      const delivered = sim.events.size;
      const s = last!;
      const figures = `read-only start: recorded ${s.outbox.recorded ?? '?'} of ${recorded} epochs, delivered ${delivered}, thinned ${s.outbox.thinned}, duplicates ${sim.stats.duplicates}, password grants ${sim.stats.passwordGrants - grantsBefore}, recovered ${recoverS.toFixed(1)} s after the remount, daemon restarts 0`;
      process.stderr.write(`${figures}\n`);
      expect(daemon.child.exitCode).toBe(null);
      expect(s.outbox.thinned).toBe(0);
      expect(sim.stats.duplicates, figures).toBe(0);
      expect(delivered, figures).toBe(s.outbox.recorded);
      expect(sim.stats.passwordGrants - grantsBefore).toBe(0);
      // The recovery swapped the database under the components: one start, and the pair the spell
      // rotated is in the file (the next start refreshes with it, no password grant).
      expect(daemon.log().match(/"msg":"agent running"/g)).toHaveLength(1);
      daemon.child.kill('SIGTERM');
      expect((await daemon.exited).code).toBe(0);
      expect(storedTokenGeneration(data)).toBeGreaterThan(generationBefore);
    },
  );

  it(
    'on an empty read-only card (dataDir not even created) names it read-only, registers and delivers from memory, and creates the database once writable',
    { timeout: 300_000 },
    async () => {
      const { dir, data, env } = card();
      const sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'pw' }], seed: 23 });
      const urls = await sim.start();
      onTestFinished(() => sim.stop());
      const replayFile = path.join(dir, 'drive.nmea');
      const drive = generateDrive({ minutes: 2, hz: 10, seed: 12 });
      writeFileSync(replayFile, driveText(drive));
      const config = writeConfig({ dir, urls, gnss: { replayFile, replaySpeed: 2 }, storage: { minFreeBytes: 1024 * 1024 } });
      // dataDir a folder of the card that does not exist yet: mkdir -p said ENOENT there.
      const dataDir = path.join(data, 'agent');
      writeFileSync(config, JSON.stringify({ ...JSON.parse(readFileSync(config, 'utf8')), dataDir }));
      expect(sh('mount', ['-o', 'remount,ro', data])).toBe(true);

      const register = await runCli(['register', '--config', config]);
      expect(register.stderr).toMatch(/the data directory's filesystem is read-only/);
      expect(register.stderr).not.toMatch(/ENOENT/);

      const daemon = startDaemon(dir, config, env);
      stopOnFinish(daemon);
      const socket = path.join(dir, 'status.sock');
      let last: StatusSnapshot | undefined;
      const status = async (): Promise<StatusSnapshot | undefined> => {
        if (daemon.child.exitCode !== null) throw new Error(`daemon exited ${daemon.child.exitCode}\n${daemon.log().slice(-3000)}`);
        last = await requestSnapshot(socket, 1000).catch(() => undefined);
        return last;
      };
      await waitFor('delivery from memory on the empty read-only card', () => sim.events.size > 100, {
        timeoutMs: 60_000,
        detail: daemon.log,
      });
      await waitFor('status', async () => (await status()) !== undefined, { timeoutMs: 10_000, detail: daemon.log });
      expect(last!.disk.readOnly).toBe(true);
      expect(assessHealth(last!).reasons[0]).toMatch(/^read-only data directory: /);
      expect(daemon.log()).not.toMatch(/ENOENT/);

      expect(sh('mount', ['-o', 'remount,rw', data])).toBe(true);
      await waitFor('the card taken read-write', () => /stored the fixes held while the data directory was read-only/.test(daemon.log()), {
        timeoutMs: 30_000,
        detail: daemon.log,
      });
      await waitFor(
        'the drive to end and the queue to drain',
        async () => {
          const s = await status();
          return s !== undefined && s.receiver?.link === 'ended' && s.outbox.pending === 0 && s.disk.heldInMemory === undefined;
        },
        { timeoutMs: 180_000, detail: daemon.log },
      );
      const s = last!;
      const figures = `empty read-only card: recorded ${s.outbox.recorded ?? '?'} of ${drive.truth.length} epochs, delivered ${sim.events.size}, duplicates ${sim.stats.duplicates}, password grants ${sim.stats.passwordGrants}, upserts ${sim.stats.devicesCreated + sim.stats.devicesUpdated}`;
      process.stderr.write(`${figures}\n`);
      expect(sim.stats.duplicates, figures).toBe(0);
      expect(sim.events.size, figures).toBe(s.outbox.recorded);
      // The pair obtained in memory is stored at the recovery: no second password grant.
      expect(sim.stats.passwordGrants, figures).toBe(1);
      expect(s.registration.deviceUUID).toBeDefined();
      daemon.child.kill('SIGTERM');
      expect((await daemon.exited).code).toBe(0);
    },
  );

  it(
    'a recovery that fails on the writable card (the database cannot be opened) keeps the daemon running with what it holds, and the next one stores it',
    { timeout: 300_000 },
    async () => {
      const { dir, data, env } = card();
      const sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'pw' }], seed: 24 });
      const urls = await sim.start();
      onTestFinished(() => sim.stop());
      const replayFile = path.join(dir, 'drive.nmea');
      const drive = generateDrive({ minutes: 1, hz: 10, seed: 14 });
      writeFileSync(replayFile, driveText(drive));
      const config = writeConfig({ dir, urls, gnss: { replayFile, replaySpeed: 2 }, storage: { minFreeBytes: 1024 * 1024 } });
      const dataDir = path.join(data, 'agent');
      writeFileSync(config, JSON.stringify({ ...JSON.parse(readFileSync(config, 'utf8')), dataDir }));
      expect(sh('mount', ['-o', 'remount,ro', data])).toBe(true);

      const daemon = startDaemon(dir, config, env);
      stopOnFinish(daemon);
      const socket = path.join(dir, 'status.sock');
      let last: StatusSnapshot | undefined;
      const status = async (): Promise<StatusSnapshot | undefined> => {
        if (daemon.child.exitCode !== null) throw new Error(`daemon exited ${daemon.child.exitCode}\n${daemon.log().slice(-3000)}`);
        last = await requestSnapshot(socket, 1000).catch(() => undefined);
        return last;
      };
      // Held in memory, none delivered (the platform answers 503), so the recovery has fixes to carry.
      sim.setFaults('events', { status503Rate: 1 });
      await waitFor('fixes held in memory', async () => ((await status())?.disk.heldInMemory ?? 0) > 100, {
        timeoutMs: 60_000,
        detail: daemon.log,
      });
      // Writable again, but the database's name is taken by a directory: opening it read-write fails.
      expect(sh('sh', ['-c', `mount -o remount,rw '${data}' && mkdir -p '${dataDir}/agent.db'`])).toBe(true);
      await waitFor('the failed recovery', () => /starting the store again failed/.test(daemon.log()), {
        timeoutMs: 30_000,
        detail: daemon.log,
      });
      await waitFor('status again, from memory', async () => ((await status())?.disk.heldInMemory ?? 0) > 100, {
        timeoutMs: 30_000,
        detail: daemon.log,
      });
      expect(daemon.log()).toMatch(/could not be taken read-write: recording into memory again/);

      rmSync(path.join(dataDir, 'agent.db'), { recursive: true });
      sim.setFaults('events', undefined);
      await waitFor('the card taken read-write', () => /stored the fixes held while the data directory was read-only/.test(daemon.log()), {
        timeoutMs: 60_000,
        detail: daemon.log,
      });
      await waitFor(
        'the drive to end and the queue to drain',
        async () => {
          const s = await status();
          return s !== undefined && s.receiver?.link === 'ended' && s.outbox.pending === 0 && s.disk.heldInMemory === undefined;
        },
        { timeoutMs: 180_000, detail: daemon.log },
      );
      const s = last!;
      const figures = `failed recovery: recorded ${s.outbox.recorded ?? '?'} of ${drive.truth.length} epochs, delivered ${sim.events.size}, thinned ${s.outbox.thinned}, duplicates ${sim.stats.duplicates}, password grants ${sim.stats.passwordGrants}`;
      process.stderr.write(`${figures}\n`);
      expect(s.outbox.thinned).toBe(0);
      expect(sim.stats.duplicates, figures).toBe(0);
      expect(sim.events.size, figures).toBe(s.outbox.recorded);
      // The pair obtained in memory is kept through the failed recovery and stored at the next: one grant in all.
      expect(sim.stats.passwordGrants, figures).toBe(1);
      daemon.child.kill('SIGTERM');
      expect((await daemon.exited).code).toBe(0);
    },
  );
});

/** The generation of the token pair in the card's file (read-only, with the daemon stopped or not). */
function storedTokenGeneration(data: string): number {
  const db = new BetterSqlite3(path.join(data, 'agent.db'), { readonly: true });
  try {
    return (db.prepare('SELECT generation FROM token_pair WHERE id = 1').get() as { generation: number }).generation;
  } finally {
    db.close();
  }
}
