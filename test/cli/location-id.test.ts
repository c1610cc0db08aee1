import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { PlatformSimulator } from '../../src/sim/index.js';
import { stableLocationId } from '../../src/sites/stable-id.js';
import { validateLocationBatch } from '../../src/sites/validate.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/tmp.js';
import { CUSTOMER, DEPOT } from '../sites/sites.js';

/** A location without an id gets a stable one, the dry run names the real URL, a failure claims no id. */

async function setup(): Promise<{ dir: string; config: string; sim: PlatformSimulator; file: string; planningUrl: string }> {
  const sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'pw-loc-13' }] });
  const urls = await sim.start();
  onTestFinished(() => sim.stop());
  const dir = tempDir();
  const config = path.join(dir, 'config.json');
  writeFileSync(
    config,
    JSON.stringify({
      platform: { authUrl: urls.authUrl, deviceUrl: urls.deviceUrl, planningUrl: urls.planningUrl },
      credentials: { username: 'agent', password: 'pw-loc-13' },
      device: { externalSystemId: 'sys', externalDeviceId: 'truck-1', carrierCode: 'C1' },
      gnss: { path: '/dev/ttyACM0' },
      dataDir: path.join(dir, 'data'),
    }),
    { mode: 0o600 },
  );
  const file = path.join(dir, 'sites.json');
  writeFileSync(file, JSON.stringify([CUSTOMER, DEPOT]));
  return { dir, config, sim, file, planningUrl: urls.planningUrl };
}

describe('the id of a location given without one', () => {
  it('is a UUID v5 of the name and address: case, spacing and the surveyed coordinate do not change it', () => {
    const a = stableLocationId(DEPOT);
    expect(a.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(a.from).toBe('name and address');
    const resurveyed = { ...DEPOT, geoReference: { ...DEPOT.geoReference, lat: 52.19563 } };
    const retyped = {
      ...DEPOT,
      administrativeReference: { ...DEPOT.administrativeReference, street: ' valutaBoulevard ', city: 'AMERSFOORT' },
    };
    expect(stableLocationId(resurveyed).id).toBe(a.id);
    expect(stableLocationId(retyped).id).toBe(a.id);
    expect(stableLocationId({ ...DEPOT, name: 'Depot Amersfoort-Noord' }).id).not.toBe(a.id);
    expect(stableLocationId({ ...DEPOT, administrativeReference: { ...DEPOT.administrativeReference, houseNumber: '18' } }).id).not.toBe(
      a.id,
    );
  });

  it('comes from the GLN or externalAttributes.externalId when the location has one', () => {
    const gln = stableLocationId({ ...DEPOT, gln: '8712345000004' });
    expect(gln.from).toBe('gln');
    expect(stableLocationId({ ...CUSTOMER, gln: '8712345000004' }).id).toBe(gln.id);
    const ext = stableLocationId({ ...DEPOT, externalAttributes: { externalId: 'ERP-42' } });
    expect(ext.from).toBe('externalAttributes.externalId');
    expect(ext.id).not.toBe(stableLocationId(DEPOT).id);
  });

  it('two entries of one batch describing the same site are refused, as two equal ids are', () => {
    const batch = validateLocationBatch([DEPOT, { ...DEPOT, type: 'customer' }]);
    expect(batch.ok).toBe(false);
    expect(batch.errors.map((e) => e.path)).toEqual(['[1]']);
    expect(batch.errors[0]?.message).toMatch(/same name and address as \[0\], so both would get id [0-9a-f-]{36}/);
  });
});

describe('location put without ids through the built CLI', () => {
  it('the same file uploaded twice updates the same locations', async () => {
    const { config, sim, file } = await setup();
    const first = await runCli(['location', 'put', '--config', config, file]);
    expect(first.code, first.stderr).toBe(0);
    const ids = (JSON.parse(first.stdout) as { id: string }[]).map((l) => l.id);
    expect(ids).toEqual([stableLocationId(CUSTOMER).id, stableLocationId(DEPOT).id]);
    expect(first.stderr).toContain(
      `used id ${ids[0]} (Customer Utrecht), derived from its name and address: uploading the same location again updates it`,
    );
    const again = await runCli(['location', 'put', '--config', config, file]);
    expect(again.code, again.stderr).toBe(0);
    expect(sim.locations.size).toBe(2);
    for (const id of ids) expect(sim.locations.get(id)?.version).toBe(2);
  });

  it('an id derived from a name alone says that another site of that name would replace it', async () => {
    const { config, dir } = await setup();
    const file = path.join(dir, 'depot.json');
    writeFileSync(file, JSON.stringify({ name: 'Depot', type: 'warehouse', geoReference: DEPOT.geoReference }));
    const r = await runCli(['location', 'put', '--config', config, file]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/derived from its name: uploading the same location again updates it; another site/);
    expect(r.stderr).toContain(
      'another site of this name without an address would replace it: give it an id (--id, or "id" in the file) or an address',
    );
  });

  it('--dry-run names the URL of the configuration it would use', async () => {
    const { config, sim, file, planningUrl } = await setup();
    const r = await runCli(['location', 'put', '--dry-run', '--config', config, file]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`dry run: would send 2 requests PUT ${planningUrl}/otm/api/v5/locations (from ${config})`);
    expect(sim.stats.requests.locations).toBe(0);
  });

  it('--dry-run without a configuration names the production default and why', async () => {
    const { file } = await setup();
    const r = await runCli(['location', 'put', '--dry-run', file], { env: { TELEMATICS_AGENT_CONFIG: '/nonexistent/config.json' } });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      'PUT https://planning-receive-api.services.simacan.com/otm/api/v5/locations (the production default: the configuration was not used: cannot read /nonexistent/config.json: no such file',
    );
  });

  it('a failed upload claims no id: nothing is printed as used', async () => {
    const { config, sim, file } = await setup();
    sim.setFaults('locations', { status500Rate: 1 });
    const r = await runCli(['location', 'put', '--config', config, file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('summary: 0 of 2 stored');
    expect(r.stderr).not.toMatch(/used id|generated id|would use/);
  });
});
