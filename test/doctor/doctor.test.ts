import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { systemClock } from '../../src/system/clock.js';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { doctorExitCode, fail, pass, warn } from '../../src/doctor/check.js';
import { checkReceiver } from '../../src/doctor/gnss-checks.js';
import { checkConfig, checkDisk, checkPasswordFile } from '../../src/doctor/local-checks.js';
import { PlatformSimulator } from '../../src/sim/index.js';
import { driveText, generateDrive } from '../../src/sim/receiver/index.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/tmp.js';

const base = (dir: string, extra: Record<string, unknown> = {}) => ({
  platform: { authUrl: 'http://127.0.0.1:9/api/v1', deviceUrl: 'http://127.0.0.1:9/api/public/v2/', planningUrl: 'http://127.0.0.1:9' },
  credentials: { username: 'agent', passwordFile: path.join(dir, 'pw') },
  device: { externalSystemId: 'ACME', carrierCode: 'C' },
  gnss: { replayFile: path.join(dir, 'drive.nmea') },
  dataDir: path.join(dir, 'data'),
  ...extra,
});

describe('doctor checks', () => {
  it('password file mode: 0600 passes, 0644 fails with the chmod', () => {
    const dir = tempDir();
    const pw = path.join(dir, 'pw');
    writeFileSync(pw, 'x\n', { mode: 0o600 });
    const config = parseConfig(base(dir), { source: path.join(dir, 'c.json'), env: {} });
    expect(checkPasswordFile(config).verdict).toBe('PASS');
    chmodSync(pw, 0o644);
    const r = checkPasswordFile(config);
    expect(r.verdict).toBe('FAIL');
    expect(r.fix).toBe(`chmod 600 ${pw}`);
  });

  it('configuration: keys of an earlier version start the agent but warn, naming each and the fix', () => {
    const dir = tempDir();
    const write = (extra: Record<string, unknown>): string => {
      const file = path.join(dir, 'c.json');
      writeFileSync(file, JSON.stringify(base(dir, extra)), { mode: 0o600 });
      return file;
    };
    expect(checkConfig(write({}), {}).result.verdict).toBe('PASS');
    const old = checkConfig(write({ platform: { ...base(dir).platform, pingIntervalS: 45, passwordRetryMinS: 60 } }), {});
    expect(old.config).toBeDefined();
    expect(old.result).toMatchObject({
      verdict: 'WARN',
      detail: expect.stringMatching(
        /is valid, but sets 2 keys of an earlier version: platform\.passwordRetryMinS, platform\.pingIntervalS$/,
      ),
      fix: 'remove them (telematics-agent config check says what the agent does now)',
    });
    const renamed = checkConfig(write({ upload: { backlogRatePerS: 5 } }), {}).result;
    expect(renamed.fix).toBe(
      'rename upload.backlogRatePerS to upload.backlogMaxRatePerS (telematics-agent config check says what the agent does now)',
    );
  });

  it('disk: below the floor fails, near it warns', () => {
    expect(checkDisk('/d', 100, () => ({ bavail: 50, bsize: 1 })).verdict).toBe('FAIL');
    expect(checkDisk('/d', 100, () => ({ bavail: 150, bsize: 1 })).verdict).toBe('WARN');
    expect(checkDisk('/d', 100, () => ({ bavail: 500, bsize: 1 })).verdict).toBe('PASS');
  });

  const drive = Buffer.from(driveText(generateDrive({ minutes: 1, seed: 5 })));
  it.each([
    ['valid NMEA at the configured rate', () => drive, 'PASS', /valid sentences/],
    ['silence', () => Buffer.alloc(0), 'FAIL', /nothing arrived/],
  ])('receiver: %s', async (_n, bytes, verdict, detail) => {
    const r = await checkReceiver({
      read: async () => bytes(),
      configuredBaud: 9600,
      listenMs: 10,
      clock: { wallMs: () => Date.UTC(2026, 10, 22, 8, 1, 0) },
    });
    expect(r[0]?.verdict).toBe(verdict);
    expect(r[0]?.detail).toMatch(detail);
  });

  it('receiver: garbage at 9600 but NMEA at 38400 suggests gnss.baudRate 38400', async () => {
    const garbage = Buffer.from(Array.from({ length: 500 }, (_, i) => (i * 37) % 256));
    const r = await checkReceiver({
      read: async (baud) => (baud === 38400 ? drive : garbage),
      configuredBaud: 9600,
      listenMs: 10,
      clock: systemClock,
    });
    expect(r[0]?.verdict).toBe('FAIL');
    expect(r[0]?.fix).toBe('set gnss.baudRate to 38400');
  });

  it('receiver: fix and a clock far from GNSS time warns', async () => {
    const r = await checkReceiver({
      read: async () => drive,
      configuredBaud: undefined,
      listenMs: 10,
      clock: { wallMs: () => Date.UTC(2026, 10, 22, 9) },
    });
    expect(r[1]?.verdict).toBe('PASS');
    expect(r[2]?.verdict).toBe('WARN');
    // About an hour off, in words as status and the TLS errors say it (it was "by 3540.0 s").
    expect(r[2]?.detail).toMatch(/^system clock \d\d min ahead of GNSS time$/);
  });

  it('exit code: 1 only when something failed', () => {
    expect(doctorExitCode([pass('a', ''), warn('b', '', '')])).toBe(0);
    expect(doctorExitCode([pass('a', ''), fail('b', '', '')])).toBe(1);
  });
});

describe('doctor CLI against the simulator', () => {
  let sim: PlatformSimulator | undefined;
  afterEach(async () => sim?.stop());

  it('passes with good credentials (never printing a token) and fails with a wrong password', async () => {
    const dir = tempDir();
    sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'right' }] });
    const urls = await sim.start();
    writeFileSync(path.join(dir, 'drive.nmea'), driveText(generateDrive({ minutes: 1, seed: 5 })));
    const pw = path.join(dir, 'pw');
    writeFileSync(pw, 'right\n', { mode: 0o600 });
    mkdirSync(path.join(dir, 'data'), { mode: 0o700 });
    const cfg = path.join(dir, 'config.json');
    writeFileSync(
      cfg,
      JSON.stringify(base(dir, { platform: { authUrl: urls.authUrl, deviceUrl: urls.deviceUrl, planningUrl: urls.planningUrl } })),
    );
    const run = async () => {
      const r = await runCli(['doctor', '--config', cfg]);
      return { code: r.code, out: r.stdout };
    };
    const ok = await run();
    expect(ok.out).toMatch(/^PASS\s+credentials/m);
    expect(ok.out).toMatch(/^PASS\s+platform authUrl/m);
    // No device id configured or stored yet: the platform cannot be asked, so doctor does not claim it is unregistered.
    expect(ok.out).toMatch(/^SKIP\s+device registered\s+could not ask the platform \(no external device id yet/m);
    expect(ok.out).not.toMatch(/does not know this device/);
    expect(ok.out).not.toMatch(/eyJ|access_token/);
    expect(ok.code, ok.out).toBe(0);
    writeFileSync(pw, 'wrong\n', { mode: 0o600 });
    const bad = await run();
    expect(bad.out).toMatch(/^FAIL\s+credentials/m);
    expect(bad.code).toBe(1);
    // With an id but no token (the grant failed): SKIP with the reason, still no not-registered claim.
    const withId = base(dir, {
      platform: { authUrl: urls.authUrl, deviceUrl: urls.deviceUrl, planningUrl: urls.planningUrl },
      device: { externalSystemId: 'ACME', carrierCode: 'C', externalDeviceId: 'truck-7' },
    });
    writeFileSync(cfg, JSON.stringify(withId));
    const beforeNoToken = sim.stats.requests.devices;
    const noToken = await run();
    expect(noToken.out).toMatch(
      /^SKIP\s+device registered\s+could not ask the platform \(no token: the token service rejected the credentials\)/m,
    );
    expect(noToken.out).not.toMatch(/does not know this device/);
    // That run sent the device service only the address check's probe.
    const probeOnly = sim.stats.requests.devices - beforeNoToken;
    const devicesAsked = sim.stats.requests.devices;
    // With an id and a token the platform is asked, and only its answer says "does not know".
    writeFileSync(pw, 'right\n', { mode: 0o600 });
    const asked = await run();
    expect(asked.out).toMatch(/^WARN\s+device registered\s+not registered yet \(the platform does not know this device\)/m);
    expect(sim.stats.requests.devices - devicesAsked).toBe(probeOnly + 1);
  });
});
