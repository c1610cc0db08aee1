import { spawn } from 'node:child_process';
import { chmodSync, chownSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { PlatformSimulator } from '../../src/sim/index.js';
import { CLI, REPO_ROOT } from '../helpers/paths.js';
import { cliEnv, runCli, type CliRun } from '../helpers/run-cli.js';

/**
 * CLI commands run as root beside the service never lock the service user out of its
 * data. Needs root (to give dataDir to another user and to run the CLI as that user).
 */
const IS_ROOT = process.getuid?.() === 0;
if (!IS_ROOT) process.stderr.write('skipping the dataDir ownership tests: they need root\n');

const SERVICE = 65534; // nobody stands in for the service user

function runAs(uid: number, args: string[]): Promise<CliRun> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CLI, ...args], { cwd: REPO_ROOT, env: cliEnv(), uid, gid: uid, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** A service-owned setup outside the run's 0700 TMPDIR: config, password and dataDir all the service user's. */
function serviceTree(urls: { authUrl: string; deviceUrl: string; planningUrl: string }): { config: string; dataDir: string } {
  const dir = mkdtempSync('/tmp/ta-owner-');
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  chmodSync(dir, 0o755);
  const etc = path.join(dir, 'etc');
  const dataDir = path.join(dir, 'data');
  mkdirSync(etc, { mode: 0o700 });
  mkdirSync(dataDir, { mode: 0o700 });
  const passwordFile = path.join(etc, 'password');
  writeFileSync(passwordFile, 'pw\n', { mode: 0o600 });
  const config = path.join(etc, 'config.json');
  writeFileSync(
    config,
    JSON.stringify({
      platform: { authUrl: urls.authUrl, deviceUrl: urls.deviceUrl, planningUrl: urls.planningUrl },
      credentials: { username: 'agent', passwordFile },
      device: { externalSystemId: 'owner-sys', externalDeviceId: 'gw-owner', carrierCode: 'C1' },
      gnss: { path: '/dev/ttyACM0' },
      dataDir,
    }),
    { mode: 0o600 },
  );
  for (const f of [etc, dataDir, passwordFile, config]) chownSync(f, SERVICE, SERVICE);
  return { config, dataDir };
}

describe.skipIf(!IS_ROOT)('files the CLI creates in dataDir belong to dataDir', () => {
  it('register as root creates agent.db owned by the service user, who can then open it', async () => {
    const sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'pw' }] });
    const urls = await sim.start();
    onTestFinished(() => sim.stop());
    const { config, dataDir } = serviceTree(urls);
    const reg = await runCli(['register', '--config', config]);
    expect(reg.code, reg.stderr).toBe(0);
    for (const suffix of ['', '-wal', '-shm']) {
      const file = path.join(dataDir, `agent.db${suffix}`);
      if (suffix === '') expect(existsSync(file)).toBe(true);
      if (existsSync(file))
        expect({ file, uid: statSync(file).uid, gid: statSync(file).gid }).toEqual({ file, uid: SERVICE, gid: SERVICE });
    }
    const asService = await runAs(SERVICE, ['outbox', 'export', '--config', config]);
    expect(asService.code, asService.stderr).toBe(0);
  });

  it('a database the service user cannot open: the error names the file, its owner and mode', async () => {
    const { config, dataDir } = serviceTree({
      authUrl: 'http://127.0.0.1:9/api/v1',
      deviceUrl: 'http://127.0.0.1:9/api/public/v2/',
      planningUrl: 'http://127.0.0.1:9',
    });
    const db = path.join(dataDir, 'agent.db');
    closeSync(openSync(db, 'w', 0o600)); // left by root before this fix
    const r = await runAs(SERVICE, ['outbox', 'export', '--config', config]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`cannot open the database ${db} as uid ${SERVICE} (owner 0:0, mode 0600;`);
    expect(r.stderr).toMatch(/chown -R telematics-agent:/);
  });
});
