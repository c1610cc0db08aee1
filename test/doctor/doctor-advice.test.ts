import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { PlatformSimulator } from '../../src/sim/index.js';
import { doctorExitCode } from '../../src/doctor/check.js';
import { runDoctor } from '../../src/doctor/run-doctor.js';
import { driveText, generateDrive } from '../../src/sim/receiver/index.js';
import { tempDir } from '../helpers/tmp.js';

/** doctor's advice: a stopped service, a password that cannot be read, a rejected inline password. */
function config(dir: string, o: { urls?: { authUrl: string; deviceUrl: string; planningUrl: string }; credentials?: object } = {}): string {
  const replayFile = path.join(dir, 'drive.nmea');
  writeFileSync(replayFile, driveText(generateDrive({ minutes: 1, seed: 5 })));
  const file = path.join(dir, 'config.json');
  // Nothing listens on port 9 of the loopback: the platform checks fail at once, offline.
  const nowhere = 'http://127.0.0.1:9';
  writeFileSync(
    file,
    JSON.stringify({
      platform: o.urls ?? { authUrl: `${nowhere}/api/v1`, deviceUrl: `${nowhere}/api/public/v2/`, planningUrl: nowhere },
      credentials: o.credentials ?? { username: 'agent', password: 'pw' },
      device: { externalSystemId: 'ACME', externalDeviceId: 'gw-8', carrierCode: 'C' },
      gnss: { replayFile },
      dataDir: path.join(dir, 'data'),
      // The socket a stopped agent leaves no one listening on.
      status: { socketPath: path.join(dir, 'status.sock') },
    }),
    { mode: 0o600 },
  );
  return file;
}

describe('doctor: the service', () => {
  it('on a gateway with the agent stopped: FAIL "service", exit 1', async () => {
    const dir = tempDir();
    const results = await runDoctor(config(dir), {}, { gateway: () => true });
    const service = results.find((r) => r.name === 'service');
    expect(service?.verdict).toBe('FAIL');
    expect(service?.detail).toContain(`no answer on ${path.join(dir, 'status.sock')}`);
    expect(doctorExitCode(results)).toBe(1);
  });

  it('off a gateway (a developer config, no unit installed): WARN naming the command that starts one, no failure of its own', async () => {
    const dir = tempDir();
    const file = config(dir);
    const results = await runDoctor(file, {}, { gateway: () => false });
    const service = results.find((r) => r.name === 'service');
    expect(service?.verdict).toBe('WARN');
    expect(service?.fix).toBe(`start one: telematics-agent run --config ${file}`);
    expect(results.filter((r) => r.verdict === 'FAIL' && r.name === 'service')).toEqual([]);
  });
});

describe('doctor: the credentials line', () => {
  it('a password file that is not there: one readable FAIL naming the key, never "fix the failed platform authUrl check first"', async () => {
    const dir = tempDir();
    const pw = path.join(dir, 'password');
    const results = await runDoctor(config(dir, { credentials: { username: 'agent', passwordFile: pw } }), {}, { gateway: () => false });
    // The address checks fail too (nothing listens): they are not what to fix for the credentials.
    expect(results.find((r) => r.name === 'platform authUrl')?.verdict).toBe('FAIL');
    const credentials = results.find((r) => r.name === 'credentials');
    expect(credentials?.verdict).toBe('FAIL');
    expect(credentials?.detail).toBe(`not tried: the password cannot be read (credentials.passwordFile: cannot read ${pw}: no such file)`);
    expect(credentials?.fix).not.toMatch(/authUrl/);
  });

  it('an inline password the token service rejects: the advice names credentials.password, not a password file', async () => {
    const dir = tempDir();
    const sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'the-right-one' }] });
    const urls = await sim.start();
    onTestFinished(() => sim.stop());
    const file = config(dir, { urls: { authUrl: urls.authUrl, deviceUrl: urls.deviceUrl, planningUrl: urls.planningUrl } });
    const results = await runDoctor(file, {}, { gateway: () => false });
    const credentials = results.find((r) => r.name === 'credentials');
    expect(credentials?.verdict).toBe('FAIL');
    expect(credentials?.fix).toBe('correct credentials.username or credentials.password for this environment');
  });
});
