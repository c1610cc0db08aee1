import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI } from '../../helpers/paths.js';
import { runCli as run } from '../../helpers/run-cli.js';
import { tempDir } from '../../helpers/tmp.js';
import { PlatformSimulator, type SimUrls } from '../../../src/sim/index.js';

/** `telematics-agent register` and `device show` as a user runs them: the built CLI against the simulator. */

const built = existsSync(CLI);
if (!built) process.stderr.write('skipping CLI registration tests: run `npm run build` first (dist/ is absent)\n');

function writeConfig(dir: string, urls: SimUrls, password: string): string {
  const file = path.join(dir, 'config.json');
  const config = {
    platform: { authUrl: urls.authUrl, deviceUrl: urls.deviceUrl, planningUrl: urls.planningUrl },
    credentials: { username: 'agent', password },
    device: { externalSystemId: 'fleet-sys', externalDeviceId: 'truck-9', carrierCode: 'C1', licensePlate: 'AB-12-CD' },
    gnss: { path: '/dev/ttyACM0' },
    dataDir: path.join(dir, 'data'),
  };
  writeFileSync(file, JSON.stringify(config), { mode: 0o600 });
  return file;
}

describe.skipIf(!built)('telematics-agent register / device show', () => {
  it('registers, prints the platform device, then shows it; a second register keeps the deviceUUID', async () => {
    const sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'Cli-Secret-Pw-77' }] });
    const urls = await sim.start();
    try {
      const dir = tempDir();
      const config = writeConfig(dir, urls, 'Cli-Secret-Pw-77');
      const missing = await run(['device', 'show', '--config', config]);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/truck-9.*not registered.*telematics-agent register/);
      const reg = await run(['register', '--config', config]);
      expect(reg.stderr).toMatch(/registered: deviceUUID [0-9a-f-]{36}, externalDeviceId truck-9 \(from config\)/);
      expect(reg.code).toBe(0);
      const device = JSON.parse(reg.stdout) as Record<string, unknown>;
      expect(device).toMatchObject({
        externalDeviceId: 'truck-9',
        externalSystemId: 'fleet-sys',
        licensePlate: 'AB-12-CD',
        deviceUUID: sim.devices[0]?.deviceUUID,
      });
      const shown = await run(['device', 'show', '--config', config]);
      expect(shown.code).toBe(0);
      expect(JSON.parse(shown.stdout)).toMatchObject({ deviceUUID: device.deviceUUID });
      const again = await run(['register', '--config', config]);
      expect(JSON.parse(again.stdout)).toMatchObject({ deviceUUID: device.deviceUUID });
      // Three commands, one database: the second and third reuse the stored pair (same boot).
      expect(sim.stats).toMatchObject({ passwordGrants: 1, refreshReuses: 0, devicesCreated: 1, devicesUpdated: 1 });
      for (const out of [reg, shown, again, missing]) expect(out.stdout + out.stderr).not.toContain('Cli-Secret-Pw-77');
    } finally {
      await sim.stop();
    }
  });

  it('rejected credentials exit 2 with the reason, never the password', async () => {
    const sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'right' }] });
    const urls = await sim.start();
    try {
      const config = writeConfig(tempDir(), urls, 'Wrong-Secret-Pw-88');
      const r = await run(['register', '--config', config]);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(
        `telematics-agent: registration failed: the platform refused the password for user "agent" (it said: Invalid user credentials). Check credentials.username and credentials.password in ${config}, then run the command again.\n`,
      );
      expect(r.stdout + r.stderr).not.toContain('Wrong-Secret-Pw-88');
      expect(sim.stats.passwordRejected).toBe(1);
    } finally {
      await sim.stop();
    }
  });

  it('a 403 exits 2 naming the fix', async () => {
    const sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'pw', carriers: ['OTHER'] }] });
    const urls = await sim.start();
    try {
      const r = await run(['register', '--config', writeConfig(tempDir(), urls, 'pw')]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/HTTP 403 .*not permitted.*C1.*device\.carrierCode/);
    } finally {
      await sim.stop();
    }
  });
});
