import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { PlatformSimulator } from '../../src/sim/index.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/tmp.js';

/**
 * A one-shot command whose password the platform refuses says so in a
 * sentence (which user, what the platform said, where the password came from), without a JSON
 * log line or a retry time, which mean nothing to a command that exits.
 */
const WRONG = 'Wrong-Pw-Never-Shown-5';

async function setup(): Promise<{ config: string; passwordFile: string; sim: PlatformSimulator }> {
  const sim = new PlatformSimulator({ users: [{ username: 'fleet-7', password: 'the-right-one' }] });
  const urls = await sim.start();
  onTestFinished(() => sim.stop());
  const dir = tempDir();
  const passwordFile = path.join(dir, 'password');
  writeFileSync(passwordFile, `${WRONG}\n`, { mode: 0o600 });
  const config = path.join(dir, 'config.json');
  writeFileSync(
    config,
    JSON.stringify({
      platform: { authUrl: urls.authUrl, deviceUrl: urls.deviceUrl, planningUrl: urls.planningUrl },
      credentials: { username: 'fleet-7', passwordFile },
      device: { externalSystemId: 'sys', externalDeviceId: 'truck-1', carrierCode: 'C1' },
      gnss: { path: '/dev/ttyACM0' },
      dataDir: path.join(dir, 'data'),
    }),
  );
  return { config, passwordFile, sim };
}

const LOCATION = {
  id: '0b8a4a52-56b9-4a39-9f0e-5b6c1d2e3f40',
  name: 'Depot',
  type: 'warehouse',
  geoReference: { type: 'latLonPointGeoReference', lat: 52.1, lon: 5.1 },
};

describe('a rejected password in one-shot commands', () => {
  it.each([
    ['register', [], 'registration'],
    ['device show', ['device', 'show'], 'device retrieval'],
  ])('%s: one sentence on stderr, exit 2', async (_name, args, what) => {
    const { config, passwordFile } = await setup();
    const r = await runCli([...(args.length > 0 ? args : ['register']), '--config', config]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `telematics-agent: ${what} failed: the platform refused the password for user "fleet-7" (it said: Invalid user credentials). Check credentials.username in ${config} and the password file ${passwordFile}, then run the command again.\n`,
    );
    expect(r.stdout).toBe('');
  });

  it('location put: the same sentence for the location, no retry wait, nothing stored', async () => {
    const { config, sim } = await setup();
    const file = path.join(path.dirname(config), 'depot.json');
    writeFileSync(file, JSON.stringify(LOCATION));
    const started = performance.now();
    const r = await runCli(['location', 'put', '--config', config, file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `not stored ${LOCATION.id} (Depot): location upload failed: the platform refused the password for user "fleet-7" (it said: Invalid user credentials). Check credentials.username in ${config}`,
    );
    expect(r.stderr).not.toMatch(/"level"|next attempt|retry|restart/);
    expect(r.stdout + r.stderr).not.toContain(WRONG);
    expect(sim.stats.passwordRejected).toBe(1);
    expect(sim.locations.size).toBe(0);
    // One password attempt, no waiting out the daemon's backoff (its first wait is 120 s).
    expect(performance.now() - started).toBeLessThan(60_000);
  });
});
