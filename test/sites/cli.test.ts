import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Fix } from '../../src/fix/fix.js';
import { ReplaySource } from '../../src/gnss/sources/replay-source.js';
import { silentLogger } from '../../src/log.js';
import { localDistanceM } from '../../src/sites/average.js';
import { FixPublisher } from '../../src/socket/fix-publisher.js';
import { GnssFixFeed } from '../../src/fix-feed/gnss-feed.js';
import type { OtmLocation } from '../../src/sites/site-types.js';
import { PlatformSimulator, type SimUrls } from '../../src/sim/index.js';
import type { StatusSnapshot } from '../../src/status/snapshot.js';
import { StatusServer } from '../../src/socket/server.js';
import { CLI } from '../helpers/paths.js';
import { runCli as run } from '../helpers/run-cli.js';
import { KNOWN_POSITION } from './nmea-writer.js';
import { CUSTOMER, DEPOT as DEPOT_SITE } from './sites.js';

/** `telematics-agent location put|here` as a field technician runs them: the built CLI, the simulator, a replayed receiver. */

const built = existsSync(CLI);
if (!built) process.stderr.write('skipping location CLI tests: run `npm run build` first (dist/ is absent)\n');

const FIXTURE = path.resolve(import.meta.dirname, '../fixtures/locations/stationary-amersfoort.nmea');
const PASSWORD = 'Loc-Secret-Pw-42';
const ID = '6a1f7c3e-2b4d-4e8f-9a0b-1c2d3e4f5a6b';
const root = mkdtempSync(path.join(os.tmpdir(), 'ta-loc-cli-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;

function workDir(): string {
  return mkdtempSync(path.join(root, `${++counter}-`));
}

function writeJson(dir: string, name: string, value: unknown, mode = 0o644): string {
  const file = path.join(dir, name);
  writeFileSync(file, JSON.stringify(value, null, 2), { mode });
  return file;
}

function writeConfig(dir: string, urls: SimUrls, gnss: Record<string, unknown> = { replayFile: FIXTURE, replaySpeed: 0 }): string {
  return writeJson(
    dir,
    'config.json',
    {
      platform: { authUrl: urls.authUrl, deviceUrl: urls.deviceUrl, planningUrl: urls.planningUrl },
      credentials: { username: 'agent', password: PASSWORD },
      device: { externalSystemId: 'fleet-sys', externalDeviceId: 'truck-7', carrierCode: 'C1' },
      gnss,
      dataDir: path.join(dir, 'data'),
      status: { socketPath: path.join(dir, 'status.sock') },
    },
    0o600,
  );
}

const DEPOT = { id: ID, ...DEPOT_SITE };

// Every test talks to a fresh simulator of its own.
let sim: PlatformSimulator;
let urls: SimUrls;
beforeEach(async () => {
  sim = new PlatformSimulator({ users: [{ username: 'agent', password: PASSWORD }] });
  urls = await sim.start();
});
afterEach(async () => sim.stop());

describe.skipIf(!built)('telematics-agent location put', () => {
  it('--dry-run validates and prints the body without configuration or network; the derived id is printed', async () => {
    const dir = workDir();
    const r = await run(['location', 'put', '--dry-run', writeJson(dir, 'customer.json', CUSTOMER)]);
    expect(r.code).toBe(0);
    const body = JSON.parse(r.stdout) as OtmLocation;
    expect(body).toMatchObject({ entityType: 'location', ...CUSTOMER });
    expect(r.stderr).toContain(
      `would use id ${body.id} (Customer Utrecht), derived from its name and address: uploading the same location again updates it`,
    );
    expect(sim.stats.requests.locations).toBe(0);
  });

  it('invalid input: every problem listed with its path, exit 2, nothing sent', async () => {
    const dir = workDir();
    const config = writeConfig(dir, urls);
    const bad = [DEPOT, { ...CUSTOMER, type: 'depot', geoReference: { type: 'latLonPointGeoReference', lat: 91, lon: 5 } }];
    const r = await run(['location', 'put', '--config', config, writeJson(dir, 'bad.json', bad)]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'is invalid (nothing was sent):\n  - [1].type: must be one of warehouse, store, environmentalZone, restrictedArea, customer, operationalBase (got the string "depot")\n  - [1].geoReference.lat: must be between -90 and 90\n',
    );
    expect(sim.stats.requests).toMatchObject({ locations: 0, 'auth.password': 0 });
  });

  it('--strict refuses a location with warnings (swapped coordinates), naming the likely mistake', async () => {
    const dir = workDir();
    const swapped = { ...DEPOT, geoReference: { type: 'latLonPointGeoReference', lat: 5.4126792, lon: 52.1956251 } };
    const file = writeJson(dir, 'swapped.json', swapped);
    const strict = await run(['location', 'put', '--dry-run', '--strict', file]);
    expect(strict.code).toBe(2);
    expect(strict.stderr).toContain(
      'warning: geoReference: lat 5.4126792, lon 52.1956251 lies outside NL, but lat 52.1956251, lon 5.4126792 lies inside: latitude and longitude look swapped',
    );
    expect(strict.stderr).toContain('has warnings and --strict is set (nothing was sent)');
    expect(strict.stdout).toBe('');
    const lenient = await run(['location', 'put', '--dry-run', file]);
    expect(lenient.code).toBe(0);
    expect(lenient.stderr).toContain('warning: geoReference: lat 5.4126792');
  });

  it('a JSON syntax error names the line and column', async () => {
    const dir = workDir();
    const file = path.join(dir, 'broken.json');
    writeFileSync(file, '{\n  "name": "x",\n  "type": warehouse\n}\n');
    const r = await run(['location', 'put', '--dry-run', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/broken\.json is not valid JSON: .*\(line 3, column 11\)/);
  });

  it('uploads an array (one request each, with a summary), then updates by the same id from stdin; one password grant', async () => {
    const dir = workDir();
    const config = writeConfig(dir, urls);
    const first = await run(['location', 'put', '--config', config, writeJson(dir, 'batch.json', [DEPOT, CUSTOMER])]);
    expect(first.code).toBe(0);
    const stored = JSON.parse(first.stdout) as OtmLocation[];
    expect(stored.map((l) => l.name)).toEqual(['Depot Amersfoort', 'Customer Utrecht']);
    expect(first.stderr).toContain(`stored [0] ${ID} (Depot Amersfoort): HTTP 200`);
    expect(first.stderr).toContain('summary: 2 of 2 stored, 0 rejected by the platform, 0 failed, 0 not sent');
    expect(sim.locations.size).toBe(2);
    expect(sim.locations.get(stored[1]!.id)?.coordinate.source).toBe('inferred');

    const second = await run(['location', 'put', '--config', config, '-'], {
      stdin: JSON.stringify({ ...DEPOT, name: 'Depot Amersfoort-Noord' }),
    });
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ id: ID, name: 'Depot Amersfoort-Noord' });
    expect(sim.locations.get(ID)).toMatchObject({ version: 2 });
    expect(sim.locations.size).toBe(2);
    // The second process reused the stored token pair: no password grant, no refresh-token reuse.
    expect(sim.stats).toMatchObject({ passwordGrants: 1, refreshReuses: 0 });
    for (const out of [first, second]) expect(out.stdout + out.stderr).not.toContain(PASSWORD);
  });

  it('5xx: retried with backoff until the platform recovers', async () => {
    const dir = workDir();
    const config = writeConfig(dir, urls);
    sim.setFaults('locations', { status503Rate: 1, limit: 1 });
    const r = await run(['location', 'put', '--config', config, writeJson(dir, 'depot.json', DEPOT)]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/attempt 1 of 4 failed \(HTTP 503\); retrying in \d\.\d s/);
    expect(r.stderr).toContain(`stored ${ID} (Depot Amersfoort): HTTP 200 after 2 attempts`);
    expect(sim.locations.get(ID)?.version).toBe(1);
  });

  it('5xx that does not end: a clear failure and exit 1, the rest of the batch not sent', async () => {
    const dir = workDir();
    const config = writeConfig(dir, urls);
    sim.setFaults('locations', { status500Rate: 1 });
    const r = await run(['location', 'put', '--config', config, writeJson(dir, 'batch.json', [DEPOT, CUSTOMER])]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `not stored [0] ${ID} (Depot Amersfoort): location upload failed: the platform answered HTTP 500; gave up after 4 attempts. Nothing was changed locally; run the command again later`,
    );
    expect(r.stderr).toContain('summary: 0 of 2 stored, 0 rejected by the platform, 1 failed, 1 not sent');
    expect(sim.stats.requests.locations).toBe(4);
    expect(r.stdout).toBe('');
  });
});

describe.skipIf(!built)('telematics-agent location here', () => {
  it('surveys from the replayed receiver and uploads form 1 at the known position', async () => {
    const dir = workDir();
    const config = writeConfig(dir, urls);
    const r = await run([
      'location',
      'here',
      '--config',
      config,
      '--name',
      'Depot Amersfoort',
      '--type',
      'warehouse',
      '--street',
      'Valutaboulevard',
      '--house-number',
      '16',
      '--city',
      'Amersfoort',
      '--country',
      'NL',
      '--phone',
      '+31 33 123 4567',
    ]);
    expect(r.stderr).toContain(`sampling 30 fixes from the replay of ${FIXTURE}`);
    expect(r.stderr).toMatch(
      /averaged 30 fixes: lat 52\.19562\d\d, lon 5\.41267\d\d; spread 1\.\d m \(largest distance from the average\), RMS \d\.\d m, mean HDOP 0\.9/,
    );
    expect(r.code).toBe(0);
    const body = JSON.parse(r.stdout) as OtmLocation & { geoReference: { lat: number; lon: number } };
    expect(r.stderr).toContain(`used id ${body.id} (Depot Amersfoort), derived from its name and address`);
    expect(localDistanceM(body.geoReference.lat, body.geoReference.lon, KNOWN_POSITION.lat, KNOWN_POSITION.lon)).toBeLessThan(0.05);
    expect(body).toMatchObject({
      type: 'warehouse',
      administrativeReference: { name: 'Depot Amersfoort', street: 'Valutaboulevard', country: 'NL' },
      contactDetails: [{ type: 'phone', value: '+31 33 123 4567' }],
    });
    expect(sim.locations.get(body.id)?.coordinate.source).toBe('given');
  });

  it('checks the options before sampling, naming the option', async () => {
    const dir = workDir();
    const config = writeConfig(dir, urls);
    const r = await run([
      'location',
      'here',
      '--config',
      config,
      '--name',
      'Yard',
      '--type',
      'depot',
      '--country',
      'nl',
      '--email',
      'yard.example.com',
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'telematics-agent: the options are invalid (nothing was surveyed or sent):\n' +
        '  - --type: must be one of warehouse, store, environmentalZone, restrictedArea, customer, operationalBase (got the string "depot")\n' +
        '  - --country: must be an ISO 3166-1 alpha-2 country code such as NL or DE (write "NL")\n' +
        '  - --email: must be an email address such as planning@example.com (got the string "yard.example.com")\n',
    );
  });

  it('refuses when the spread is above --max-spread, sending nothing', async () => {
    const dir = workDir();
    const config = writeConfig(dir, urls);
    const r = await run(['location', 'here', '--config', config, '--name', 'Yard', '--type', 'warehouse', '--max-spread', '1']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/the 30 fixes spread over 1\.\d m \(RMS \d\.\d m\), more than the limit of 1 m \(--max-spread\)/);
    expect(sim.stats.requests.locations).toBe(0);
  });

  it('refuses without a 3D fix from the receiver', async () => {
    const dir = workDir();
    const config = writeConfig(dir, urls, { path: '/dev/ttyTaNoSuchTty', baudRate: 9600 });
    const r = await run([
      'location',
      'here',
      '--config',
      config,
      '--name',
      'Yard',
      '--type',
      'warehouse',
      '--source',
      'receiver',
      '--timeout',
      '2',
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no 3D fix from the receiver on \/dev\/ttyTaNoSuchTty in 2 s: no fix at all came \(\/dev\/ttyTaNoSuchTty: /);
    expect(sim.stats.requests.locations).toBe(0);
  });

  it('takes the fixes from the running daemon instead of opening the port', async () => {
    const dir = workDir();
    // The receiver path does not exist: only the daemon can supply fixes.
    const config = writeConfig(dir, urls, { path: '/dev/ttyTaHeldByDaemon', baudRate: 9600 });
    const fixes: Fix[] = [];
    const feed = new GnssFixFeed({ source: new ReplaySource({ file: FIXTURE, speed: 0, logger: silentLogger() }), description: 'fixture' });
    for await (const f of feed.fixes(new AbortController().signal)) fixes.push(f);
    /** The daemon's publisher: publishes the receiver's epochs once someone subscribes. */
    class ReplayingPublisher extends FixPublisher {
      override subscribe(socket: Socket): void {
        super.subscribe(socket);
        setImmediate(() => fixes.forEach((f) => this.publish(f)));
      }
    }
    const publisher = new ReplayingPublisher();
    const server = new StatusServer({
      socketPath: path.join(dir, 'status.sock'),
      provider: { snapshot: () => ({}) as StatusSnapshot },
      logger: silentLogger(),
      fixes: publisher,
    });
    await server.start();
    try {
      const r = await run(['location', 'here', '--config', config, '--name', 'Yard Venlo', '--type', 'operationalBase', '--dry-run']);
      expect(r.stderr).toContain(`sampling 30 fixes from the running daemon (${path.join(dir, 'status.sock')})`);
      expect(r.code).toBe(0);
      const body = JSON.parse(r.stdout) as OtmLocation & { geoReference: { lat: number; lon: number } };
      // Form 3: coordinate with a top-level name and type, no address.
      expect(Object.keys(body).sort()).toEqual(['entityType', 'geoReference', 'id', 'name', 'type']);
      expect(localDistanceM(body.geoReference.lat, body.geoReference.lon, KNOWN_POSITION.lat, KNOWN_POSITION.lon)).toBeLessThan(0.05);
      expect(r.stderr).toContain('dry run: would send 1 request PUT');
      expect(sim.stats.requests.locations).toBe(0);
      // Asked to open the port the daemon holds: refused, with what to do instead.
      const second = await run([
        'location',
        'here',
        '--config',
        config,
        '--name',
        'Yard',
        '--type',
        'warehouse',
        '--source',
        'receiver',
        '--dry-run',
      ]);
      expect(second.code).toBe(2);
      expect(second.stderr).toContain('the running daemon holds the receiver');
      expect(second.stderr).toContain('use --source daemon (or auto), or stop the daemon first');
    } finally {
      await server.stop();
    }
  });
});
