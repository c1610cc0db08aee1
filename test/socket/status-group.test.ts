import { spawn } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { PlatformSimulator } from '../../src/sim/index.js';
import { driveText, generateDrive } from '../../src/sim/receiver/index.js';
import { requestSnapshot } from '../../src/status/status-client.js';
import { RUN_DIR_ENV } from '../../src/socket/path.js';
import { cliEnv, type CliRun } from '../helpers/run-cli.js';
import { CLI, REPO_ROOT } from '../helpers/paths.js';
import { waitFor } from '../helpers/wait.js';
import { startDaemon, writeConfig } from '../e2e/daemon.js';

/**
 * Status for the service group as installed: the daemon's socket in a RuntimeDirectory= of mode 0750 (root and the
 * service group), the configuration 0640 root:group, the password root-only. Needs root to hand
 * out owners and to run the CLI as another user.
 */
const IS_ROOT = process.getuid?.() === 0;
if (!IS_ROOT) process.stderr.write('skipping status as a group member / an outsider: needs root to run the CLI as another user\n');

const SERVICE_GID = 4242;
const NOBODY = 65534;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function statusAs(uid: number, gid: number, args: string[], env: NodeJS.ProcessEnv): Promise<CliRun> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CLI, 'status', ...args], {
      cwd: REPO_ROOT,
      env: cliEnv(env),
      uid,
      gid,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

describe.skipIf(!IS_ROOT)('status for the service group', () => {
  it('a group member sees the running daemon; a user in neither gets one line: sudo or join the group', async () => {
    // Outside the run's 0700 TMPDIR, which another user could not enter.
    const dir = mkdtempSync('/tmp/ta-group-');
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    chmodSync(dir, 0o755);
    const etc = path.join(dir, 'etc');
    const run = path.join(dir, 'run');
    for (const d of [etc, run]) {
      mkdirSync(d, { mode: 0o750 });
      chownSync(d, 0, SERVICE_GID);
    }
    const sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'pw' }] });
    const urls = await sim.start();
    cleanups.push(() => sim.stop());
    const replayFile = path.join(etc, 'drive.nmea');
    writeFileSync(replayFile, driveText(generateDrive({ minutes: 1, hz: 1 })));
    const configFile = writeConfig({ dir: etc, urls, gnss: { replayFile, replaySpeed: 1 } });
    // The default socket, as installed: no status.socketPath.
    const config = JSON.parse(readFileSync(configFile, 'utf8')) as Record<string, unknown>;
    delete config.status;
    writeFileSync(configFile, JSON.stringify(config));
    chmodSync(configFile, 0o640);
    chownSync(configFile, 0, SERVICE_GID);
    const env = { [RUN_DIR_ENV]: run };

    // The daemon with the service group as its group, so its socket is root:4242 0660 as under systemd.
    const daemon = startDaemon(dir, configFile, env);
    cleanups.push(async () => {
      if (daemon.child.exitCode === null && daemon.child.signalCode === null) {
        daemon.child.kill('SIGTERM');
        await daemon.exited;
      }
    });
    const socket = path.join(run, 'status.sock');
    await waitFor(
      'the daemon on the run directory socket',
      () =>
        requestSnapshot(socket, 2000).then(
          () => true,
          () => false,
        ),
      {
        timeoutMs: 60_000,
        detail: daemon.log,
      },
    );
    chownSync(socket, 0, SERVICE_GID);

    const member = await statusAs(NOBODY, SERVICE_GID, ['--json', '--config', configFile], env);
    const snap = JSON.parse(member.stdout) as { daemon: { running: boolean; pid?: number }; notes?: string[] };
    expect(snap.daemon, member.stderr).toMatchObject({ running: true, pid: daemon.child.pid });
    // The root-only password file is not this user's problem when it only asks for status.
    expect(snap.notes ?? []).not.toContainEqual(expect.stringContaining('invalid'));

    const outsider = await statusAs(NOBODY, NOBODY, ['--config', configFile], env);
    expect(outsider.code).toBe(2);
    expect(outsider.stdout).toBe('');
    const lines = outsider.stderr.trim().split('\n');
    expect(lines, outsider.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/sudo telematics-agent status/);
    expect(lines[0]).toMatch(/join the service's group/);
    expect(lines[0]).not.toMatch(/configuration is invalid/);
  });
});
