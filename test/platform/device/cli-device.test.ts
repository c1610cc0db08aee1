import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { PlatformSimulator, type SimUrls } from '../../../src/sim/index.js';
import { runCli as run } from '../../helpers/run-cli.js';
import { tempDir } from '../../helpers/tmp.js';

/** `device list` and `device show --plate / --external-device-id`: the built CLI against the simulator. */

function writeConfig(dir: string, urls: SimUrls, device: Record<string, unknown>): string {
  const file = path.join(dir, `config-${String(device.externalDeviceId)}.json`);
  const config = {
    platform: { authUrl: urls.authUrl, deviceUrl: urls.deviceUrl, planningUrl: urls.planningUrl },
    credentials: { username: 'agent', password: 'pw' },
    device: { externalSystemId: 'fleet-sys', carrierCode: 'C1', ...device },
    gnss: { path: '/dev/ttyACM0' },
    dataDir: path.join(dir, `data-${String(device.externalDeviceId)}`),
  };
  writeFileSync(file, JSON.stringify(config), { mode: 0o600 });
  return file;
}

describe('telematics-agent device list / show --plate / --external-device-id', () => {
  it('lists every device of the account, and retrieves another device by plate or by id', async () => {
    const sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'pw' }] });
    const urls = await sim.start();
    onTestFinished(() => sim.stop());
    const dir = tempDir();
    const mine = writeConfig(dir, urls, { externalDeviceId: 'truck-1', licensePlate: 'AA-11-BB' });
    // A second device whose plate carries an escape sequence: the table must not pass it to the terminal.
    const other = writeConfig(dir, urls, { externalDeviceId: 'truck-2', licensePlate: 'EV\u001b[2JIL' });
    for (const c of [mine, other]) expect((await run(['register', '--config', c])).code).toBe(0);

    const table = await run(['device', 'list', '--config', mine]);
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^externalDeviceId\s+licensePlate\s+carrierCode\s+externalSystemId\s+active\s+deviceUUID$/);
    expect(lines.find((l) => l.startsWith('truck-1'))).toMatch(/^truck-1\s+AA-11-BB\s+C1\s+fleet-sys\s+true\s+[0-9a-f-]{36}$/);
    expect(table.stdout).not.toContain('\u001b');
    expect(lines.find((l) => l.startsWith('truck-2'))).toContain('EV\ufffd[2JIL');
    expect(lines.at(-1)).toBe('2 devices');

    const json = await run(['device', 'list', '--json', '--config', mine]);
    const devices = JSON.parse(json.stdout) as { externalDeviceId: string; deviceUUID: string }[];
    expect(devices.map((d) => d.externalDeviceId).sort()).toEqual(['truck-1', 'truck-2']);

    const byPlate = await run(['device', 'show', '--plate', 'AA-11-BB', '--config', other]);
    expect(byPlate.code, byPlate.stderr).toBe(0);
    expect(JSON.parse(byPlate.stdout)).toMatchObject({ externalDeviceId: 'truck-1', licensePlate: 'AA-11-BB' });
    const byId = await run(['device', 'show', '--external-device-id', 'truck-2', '--config', mine]);
    expect(JSON.parse(byId.stdout)).toMatchObject({ externalDeviceId: 'truck-2' });

    const unknown = await run(['device', 'show', '--plate', 'ZZ-99-ZZ', '--config', mine]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('telematics-agent: no device with licence plate ZZ-99-ZZ in external system fleet-sys\n');
    const both = await run(['device', 'show', '--plate', 'AA-11-BB', '--external-device-id', 'truck-2', '--config', mine]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/cannot be used with/);
  });

  it('refuses "." and ".." as --plate or --external-device-id (they would name another URL): usage error naming the flag, nothing sent', async () => {
    const sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'pw' }] });
    const urls = await sim.start();
    onTestFinished(() => sim.stop());
    const config = writeConfig(tempDir(), urls, { externalDeviceId: 'truck-1' });
    for (const [flag, value] of [
      ['--plate', '..'],
      ['--plate', '.'],
      ['--external-device-id', '.'],
      ['--external-device-id', '..'],
    ] as const) {
      const r = await run(['device', 'show', flag, value, '--config', config]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(flag);
      expect(r.stderr).toMatch(/must not be "\." or "\.\."/);
      expect(r.stdout).toBe('');
    }
    expect(sim.stats.requests.devices).toBe(0);
    expect(sim.stats.requests['auth.password']).toBe(0);
  });
});
