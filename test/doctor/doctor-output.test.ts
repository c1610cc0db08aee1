import { writeFileSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { describe, expect, it, onTestFinished } from 'vitest';
import { PlatformSimulator } from '../../src/sim/index.js';
import { driveText, generateDrive } from '../../src/sim/receiver/index.js';
import { UPLOAD_FACT_KEYS } from '../../src/status/upload-facts.js';
import { openDatabase } from '../../src/store/database.js';
import { DeviceStore } from '../../src/store/device-store.js';
import { MetaStore } from '../../src/store/meta.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/tmp.js';

/** Status and doctor never cut the useful part; doctor --json; advice for the check that failed; control characters shown, not obeyed. */

function config(dir: string, urls: { authUrl: string; deviceUrl: string; planningUrl: string }): string {
  const replayFile = path.join(dir, 'drive.nmea');
  writeFileSync(replayFile, driveText(generateDrive({ minutes: 1, seed: 5 })));
  const file = path.join(dir, 'config.json');
  writeFileSync(
    file,
    JSON.stringify({
      platform: urls,
      credentials: { username: 'agent', password: 'pw' },
      device: { externalSystemId: 'ACME', externalDeviceId: 'gw-8', carrierCode: 'C' },
      gnss: { replayFile },
      dataDir: path.join(dir, 'data'),
      status: { socketPath: path.join(dir, 'status.sock') },
    }),
    { mode: 0o600 },
  );
  return file;
}

describe('status and doctor print the useful part whole', () => {
  it('doctor --json: every check whole, the exit code, and advice naming the address check that failed', async () => {
    const dir = tempDir();
    const unreachable = {
      authUrl: 'http://127.0.0.1:9/api/v1',
      deviceUrl: 'http://127.0.0.1:9/api/public/v2/',
      planningUrl: 'http://127.0.0.1:9',
    };
    const r = await runCli(['doctor', '--json', '--config', config(dir, unreachable)]);
    const out = JSON.parse(r.stdout) as {
      checks: { name: string; verdict: string; detail: string; fix?: string }[];
      failed: number;
      exitCode: number;
    };
    expect(r.code).toBe(1);
    expect(out.exitCode).toBe(1);
    const auth = out.checks.find((c) => c.name === 'platform authUrl')!;
    expect(auth.verdict).toBe('FAIL');
    expect(out.checks.find((c) => c.name === 'credentials')).toMatchObject({
      verdict: 'WARN',
      fix: 'fix the failed "platform authUrl" check first',
    });
    expect(out.failed).toBe(out.checks.filter((c) => c.verdict === 'FAIL').length);
  });

  it('doctor: when the addresses answer but the grant fails, the advice does not blame the address checks', async () => {
    const dir = tempDir();
    const sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'pw' }] });
    const urls = await sim.start();
    onTestFinished(() => sim.stop());
    sim.setFaults('auth.password', { status503Rate: 1 });
    const r = await runCli([
      'doctor',
      '--config',
      config(dir, { authUrl: urls.authUrl, deviceUrl: urls.deviceUrl, planningUrl: urls.planningUrl }),
    ]);
    expect(r.stdout).toMatch(/^PASS\s+platform authUrl/m);
    const credentials = r.stdout.split('\n').findIndex((l) => /^WARN\s+credentials/.test(l));
    expect(credentials).toBeGreaterThanOrEqual(0);
    const fix = r.stdout.split('\n')[credentials + 1]!;
    expect(fix).toMatch(/fix: the token service answered the address check but not the password grant/);
    expect(r.stdout).not.toMatch(/address checks above/);
  });

  it('status in a pipe: a long platform error whole, and no control character from the platform reaches the output', async () => {
    const dir = tempDir();
    const file = config(dir, {
      authUrl: 'http://127.0.0.1:9/api/v1',
      deviceUrl: 'http://127.0.0.1:9/api/public/v2/',
      planningUrl: 'http://127.0.0.1:9',
    });
    const db = openDatabase({ dataDir: path.join(dir, 'data'), logger: pino({ level: 'silent' }) });
    const tail =
      'the field licensePlate must match the carrier registry entry for this vehicle, see the platform documentation section 2.3';
    const message = `event upload: HTTP 400: ${'x'.repeat(120)} \u001b[2J${tail}`;
    new MetaStore(db).setJson(UPLOAD_FACT_KEYS.lastError, { code: 'PLATFORM_BAD_REQUEST', class: 'rejected', message, at: Date.now() });
    new DeviceStore(db).saveRegistration({
      externalSystemId: 'ACME',
      externalDeviceId: 'gw-8',
      deviceUUID: 'abc\u001b]0;owned\u0007def',
      configHash: 'h',
      response: {},
      registeredAt: Date.now(),
    });
    db.close();
    const r = await runCli(['status', '--config', file]);
    expect(r.stdout).toContain(tail);
    expect(r.stdout).toContain('abc\ufffd]0;owned\ufffddef');
    expect(r.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
  });
});
