import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/paths.js';
import { makeThrowawayCa } from '../../src/sim/throwaway-ca.js';
import { haveCommand, skipWithout, verifyUnit } from './tools.js';
import { DEVICE_URL, PASSWORD, provision, SCRIPT, type Run } from './provision-run.js';

/**
 * scripts/provision.sh under --root: a real install into a temporary directory (npm ci of the
 * production tree from the npm cache, native modules made to load, the configuration checked by
 * the installed CLI), then an upgrade in place, a refused change, --uninstall and --purge.
 * Receivers are real pseudo-terminals (socat) under DIR/dev, found by listening for NMEA.
 */

const AUTH_URL = 'https://auth.fleet.example.com/api/v1';
const PLANNING_URL = 'https://planning.fleet.example.com';
const BY_ID = '/dev/serial/by-id/usb-u-blox_AG_GNSS_receiver-if00';
// Textbook sentences with valid checksums (NMEA 0183 GGA and RMC).
const NMEA = [
  '$GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*47',
  '$GPRMC,123519,A,4807.038,N,01131.000,E,022.4,084.4,230394,003.1,W*6A',
];

const canRun = !skipWithout('socat', 'the provisioning test (receivers are socat ptys)') && !skipWithout('npm', 'the provisioning test');

const mode = (file: string) => (statSync(file).mode & 0o777).toString(8).padStart(4, '0');

/** DIR/provision-manifest.tsv as path -> "mode owner:group" (files and directories). */
function manifest(root: string): { owners: Map<string, string>; lines: string[] } {
  const lines = readFileSync(path.join(root, 'provision-manifest.tsv'), 'utf8').trim().split('\n');
  const owners = new Map<string, string>();
  for (const line of lines) {
    const [kind, target, m, owner] = line.split('\t');
    if ((kind === 'file' || kind === 'dir') && target) owners.set(target, `${m} ${owner}`);
  }
  return { owners, lines };
}

describe.skipIf(!canRun)('provision.sh --root', () => {
  let work = '';
  let root = '';
  const emitters: ChildProcess[] = [];
  let first: Run = { status: null, out: '' };
  let caPem = '';

  /** A pseudo-terminal at DIR/dev/NAME fed by a shell loop, as a receiver's port would be. */
  async function receiver(name: string, lines: string[]): Promise<void> {
    const script = path.join(work, `${name}.sh`);
    const printfs = lines.map((l) => `printf '%s\\r\\n' '${l}'`).join('; ');
    writeFileSync(script, `#!/bin/sh\nwhile :; do ${printfs}; sleep 0.2; done\n`);
    chmodSync(script, 0o755);
    const link = path.join(root, 'dev', name);
    const child = spawn('socat', [`PTY,link=${link},raw,echo=0`, `EXEC:${script}`], { stdio: 'ignore' });
    emitters.push(child);
    const deadline = Date.now() + 20_000;
    while (!existsSync(link)) {
      if (Date.now() > deadline) throw new Error(`socat did not create ${link}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  beforeAll(async () => {
    work = mkdtempSync(path.join(os.tmpdir(), 'ta-provision-'));
    root = path.join(work, 'root');
    mkdirSync(path.join(root, 'dev', 'serial', 'by-id'), { recursive: true });
    // The first candidate talks, but not NMEA (a modem, or a receiver at another baud rate).
    await receiver('ttyACM0', ['\u00b5\u00fe\u0011garbage-without-sentences \u00e0\u0092']);
    await receiver('ttyUSB0', NMEA);
    symlinkSync('../../ttyUSB0', path.join(root, BY_ID.slice(1)));
    writeFileSync(path.join(work, 'password'), `${PASSWORD}\n`, { mode: 0o600 });
    caPem = readFileSync(makeThrowawayCa(work).caFile, 'utf8');
    writeFileSync(path.join(work, 'private-ca.pem'), caPem);
    first = provision(root, [
      '--environment',
      'staging',
      '--username',
      'acme-gateway',
      '--password-file',
      path.join(work, 'password'),
      '--external-system-id',
      'acme-fleet',
      '--carrier-code',
      'ACME',
      '--device-url',
      DEVICE_URL,
      '--license-plate',
      'AB-123-C',
      '--driver-name',
      'Jo Jansen',
      '--auth-url',
      AUTH_URL,
      '--planning-url',
      PLANNING_URL,
      '--ca-file',
      path.join(work, 'private-ca.pem'),
    ]);
  }, 180_000);

  afterAll(() => {
    for (const child of emitters) child.kill();
    rmSync(work, { recursive: true, force: true });
  });

  it.skipIf(skipWithout('shellcheck', 'shellcheck of the provisioning scripts'))('is shellcheck clean', () => {
    const libs = readdirSync(path.join(REPO_ROOT, 'scripts', 'provision')).filter((f) => f.endsWith('.sh'));
    expect(libs.length).toBeGreaterThan(0);
    const files = [
      SCRIPT,
      ...libs.map((f) => path.join(REPO_ROOT, 'scripts', 'provision', f)),
      path.join(REPO_ROOT, '.ci', 'field-deps.sh'),
      // The package's build, its proof under emulation and its maintainer scripts.
      path.join(REPO_ROOT, 'scripts', 'package-deb.sh'),
      path.join(REPO_ROOT, 'scripts', 'node-releases.sh'),
      path.join(REPO_ROOT, 'scripts', 'prove-arch.sh'),
      // The fleet's apt repository and the upgrade's proof from it.
      path.join(REPO_ROOT, 'scripts', 'apt-repo.sh'),
      path.join(REPO_ROOT, 'scripts', 'prove-upgrade.sh'),
      ...['preinst', 'postinst', 'prerm', 'postrm', 'node-abi-check.sh'].map((f) => path.join(REPO_ROOT, 'scripts', 'deb', f)),
    ];
    const r = spawnSync('shellcheck', ['-x', ...files], { encoding: 'utf8', cwd: REPO_ROOT });
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('installs with the flags, finds the receiver by its NMEA, and never prints the password', () => {
    expect(first.status, first.out).toBe(0);
    expect(first.out).not.toContain(PASSWORD);
    expect(first.out).toMatch(/installing production dependencies \(npm ci --omit=dev/);
    // The manifest it names is the one in DIR, not the staging copy it removed on exit.
    expect(first.out).toContain(`Owners: ${path.join(root, 'provision-manifest.tsv')}`);
    const config = JSON.parse(readFileSync(path.join(root, 'etc/telematics-agent/config.json'), 'utf8'));
    expect(config).toEqual({
      environment: 'staging',
      platform: { deviceUrl: DEVICE_URL, authUrl: AUTH_URL, planningUrl: PLANNING_URL, caFile: '/etc/telematics-agent/ca.pem' },
      credentials: { username: 'acme-gateway', passwordFile: '/etc/telematics-agent/password' },
      device: { externalSystemId: 'acme-fleet', carrierCode: 'ACME', licensePlate: 'AB-123-C', driverName: 'Jo Jansen' },
      // ttyACM0 talked garbage and was passed over; ttyUSB0 is named by its stable by-id alias.
      gnss: { path: BY_ID, baudRate: 9600 },
      dataDir: '/var/lib/telematics-agent',
    });
    expect(readFileSync(path.join(root, 'etc/telematics-agent/password'), 'utf8')).toBe(PASSWORD);
    // The CA is copied beside the configuration, where the service can read it.
    expect(readFileSync(path.join(root, 'etc/telematics-agent/ca.pem'), 'utf8')).toBe(caPem);
    // The lock lives only as long as the run (run/ did not exist before it).
    expect(existsSync(path.join(root, 'run'))).toBe(false);
  });

  it('creates the files with their modes, and records the owners a real install sets', () => {
    expect(first.status, first.out).toBe(0);
    const expected: [string, string, string][] = [
      ['/etc/telematics-agent', '0750', 'root:telematics-agent'],
      ['/etc/telematics-agent/config.json', '0640', 'root:telematics-agent'],
      ['/etc/telematics-agent/password', '0600', 'root:root'],
      ['/var/lib/telematics-agent', '0700', 'telematics-agent:telematics-agent'],
      ['/opt/telematics-agent', '0755', 'root:root'],
      ['/etc/systemd/system/telematics-agent.service', '0644', 'root:root'],
      ['/etc/sysusers.d/telematics-agent.conf', '0644', 'root:root'],
      ['/etc/modules-load.d/telematics-agent.conf', '0644', 'root:root'],
      ['/etc/tmpfiles.d/telematics-agent.conf', '0644', 'root:root'],
      ['/etc/telematics-agent/ca.pem', '0644', 'root:root'],
    ];
    const { owners, lines } = manifest(root);
    for (const [target, m, owner] of expected) {
      expect(mode(path.join(root, target)), target).toBe(m);
      expect(owners.get(target), target).toBe(`${m} ${owner}`);
    }
    expect(lines).toContain('user\ttelematics-agent\tgroups=telematics-agent,dialout,gpio\tshell=/usr/sbin/nologin');
    expect(lines).toContain('run\tsystemctl enable telematics-agent.service');
    // The technicians' command runs the service's node (the native modules' ABI), not `env node`.
    expect(readFileSync(path.join(root, 'usr/local/bin/telematics-agent'), 'utf8')).toContain(
      `exec ${process.execPath} /opt/telematics-agent/dist/cli/main.js "$@"`,
    );
    expect(owners.get('/usr/local/bin/telematics-agent')).toBe('0755 root:root');
    // No /etc/passwd or /etc/group of one user that a copied tree would lay over the target's: the
    // target's systemd-sysusers creates the user from the sysusers.d file at boot.
    expect(existsSync(path.join(root, 'etc/passwd'))).toBe(false);
    expect(existsSync(path.join(root, 'etc/group'))).toBe(false);
    expect(readFileSync(path.join(root, 'etc/sysusers.d/telematics-agent.conf'), 'utf8')).toMatch(/^u telematics-agent /m);
    // ... and its tmpfiles.d entry then gives the configuration the owners the manifest records.
    const tmpfiles = readFileSync(path.join(root, 'etc/tmpfiles.d/telematics-agent.conf'), 'utf8');
    for (const target of ['/etc/telematics-agent', '/etc/telematics-agent/config.json', '/etc/telematics-agent/password']) {
      const [m, owner] = (owners.get(target) ?? '').split(' ');
      expect(tmpfiles, target).toMatch(new RegExp(`^z ${target} +${m} ${(owner ?? '').replace(':', ' +')} +-$`, 'm'));
    }
    if (haveCommand('systemctl'))
      expect(lstatSync(path.join(root, 'etc/systemd/system/multi-user.target.wants/telematics-agent.service')).isSymbolicLink()).toBe(true);
  });

  it('installs production dependencies only, with native modules that load', () => {
    expect(first.status, first.out).toBe(0);
    const app = path.join(root, 'opt/telematics-agent');
    expect(existsSync(path.join(app, 'node_modules/better-sqlite3'))).toBe(true);
    expect(existsSync(path.join(app, 'node_modules/typescript'))).toBe(false);
    expect(existsSync(path.join(app, 'node_modules/vitest'))).toBe(false);
    expect(existsSync(path.join(app, 'src'))).toBe(false);
    const natives = spawnSync(process.execPath, [path.join(REPO_ROOT, 'scripts/provision/native-check.mjs'), app], { encoding: 'utf8' });
    expect(natives.stderr).toContain('better-sqlite3: loads');
    expect(natives.stderr).toContain('@serialport/bindings-cpp: loads');
    expect(natives.stdout).toBe('');
    const check = spawnSync(
      process.execPath,
      [path.join(app, 'dist/cli/main.js'), 'config', 'check', '--quiet', '--config', path.join(root, 'etc/telematics-agent/config.json')],
      { encoding: 'utf8' },
    );
    expect(check.stderr).toBe('');
    expect(check.status).toBe(0);
  });

  it.skipIf(skipWithout('systemd-analyze', 'verify of the installed unit'))(
    'installs a unit that runs this node and passes systemd-analyze verify',
    () => {
      expect(first.status, first.out).toBe(0);
      const unit = path.join(root, 'etc/systemd/system/telematics-agent.service');
      expect(readFileSync(unit, 'utf8')).toMatch(
        new RegExp(
          `^ExecStart=${process.execPath.replace(/[.+]/g, '\\$&')} --liftoff-only --no-opt --no-maglev /opt/telematics-agent/dist/cli/main\\.js run `,
          'm',
        ),
      );
      expect(verifyUnit(unit)).toEqual({ status: 0, output: '' });
      // ttyUSB (behind the by-id alias) is one of the unit's device classes: no drop-in needed.
      expect(existsSync(path.join(root, 'etc/systemd/system/telematics-agent.service.d'))).toBe(false);
    },
  );

  it('upgrades in place: keeps the data, the password and the configuration except the keys given', () => {
    expect(first.status, first.out).toBe(0);
    const db = path.join(root, 'var/lib/telematics-agent/agent.db');
    writeFileSync(db, 'identity, tokens and 3 buffered fixes');
    const configFile = path.join(root, 'etc/telematics-agent/config.json');
    const handEdited = { ...JSON.parse(readFileSync(configFile, 'utf8')), log: { level: 'debug' } };
    writeFileSync(configFile, JSON.stringify(handEdited));

    const again = provision(root, ['--license-plate', 'XY-999-Z', '--gnss-path', '/dev/ttyS1', '--baud-rate', '38400']);
    expect(again.status, again.out).toBe(0);
    expect(again.out).toContain('keeping the stored password');
    expect(again.out).toContain('dependencies unchanged since the installed version: reusing them');
    expect(readFileSync(db, 'utf8')).toBe('identity, tokens and 3 buffered fixes');
    expect(readFileSync(path.join(root, 'etc/telematics-agent/password'), 'utf8')).toBe(PASSWORD);
    expect(JSON.parse(readFileSync(configFile, 'utf8'))).toEqual({
      ...handEdited,
      device: { ...handEdited.device, licensePlate: 'XY-999-Z' },
      gnss: { path: '/dev/ttyS1', baudRate: 38400 },
    });
    expect(mode(configFile)).toBe('0640');
    // ttyS1 is not in the unit's device classes (ttyS shares its major with the consoles).
    expect(readFileSync(path.join(root, 'etc/systemd/system/telematics-agent.service.d/10-gnss-device.conf'), 'utf8')).toMatch(
      /^DeviceAllow=\/dev\/ttyS1 rw$/m,
    );
  });

  it('--gnss-source gpsd: reads gpsd, and the unit loses the serial devices and dialout; back to serial restores them', () => {
    expect(first.status, first.out).toBe(0);
    const configFile = path.join(root, 'etc/telematics-agent/config.json');
    const dropin = path.join(root, 'etc/systemd/system/telematics-agent.service.d/10-gnss-device.conf');
    const before = JSON.parse(readFileSync(configFile, 'utf8')) as { gnss: unknown };
    const toGpsd = provision(root, ['--gnss-source', 'gpsd']);
    expect(toGpsd.status, toGpsd.out).toBe(0);
    expect((JSON.parse(readFileSync(configFile, 'utf8')) as { gnss: unknown }).gnss).toEqual({ gpsd: '127.0.0.1:2947' });
    expect(readFileSync(dropin, 'utf8')).toBe(readFileSync(path.join(REPO_ROOT, 'systemd/telematics-agent.gpsd.conf'), 'utf8'));
    expect(readFileSync(dropin, 'utf8')).toMatch(/^DeviceAllow=$/m);
    expect(readFileSync(dropin, 'utf8')).toMatch(/^SupplementaryGroups=$/m);

    const back = provision(root, ['--gnss-source', 'serial', '--gnss-path', '/dev/ttyS1', '--baud-rate', '38400']);
    expect(back.status, back.out).toBe(0);
    expect((JSON.parse(readFileSync(configFile, 'utf8')) as { gnss: unknown }).gnss).toEqual(before.gnss);
    expect(readFileSync(dropin, 'utf8')).toMatch(/^DeviceAllow=\/dev\/ttyS1 rw$/m);
  });

  it('refuses an invalid change and leaves everything as it was, the password too', () => {
    expect(first.status, first.out).toBe(0);
    const configFile = path.join(root, 'etc/telematics-agent/config.json');
    const before = readFileSync(configFile, 'utf8');
    const manifestBefore = readFileSync(path.join(root, 'provision-manifest.tsv'), 'utf8');
    // A new password on standard input: read (else the run would stop at "nothing on standard
    // input" before the configuration check), never printed, and not stored when the run fails.
    const bad = provision(root, ['--device-url', 'http://devices.example.com/api/public/v2/', '--password-file', '-'], {
      input: 'a-New-Password-7\n',
    });
    expect(bad.status).not.toBe(0);
    expect(bad.out).toMatch(/platform\.deviceUrl: must use https:\/\//);
    expect(bad.out).toContain('nothing was changed');
    expect(bad.out).not.toContain('a-New-Password-7');
    expect(readFileSync(configFile, 'utf8')).toBe(before);
    expect(readFileSync(path.join(root, 'etc/telematics-agent/password'), 'utf8')).toBe(PASSWORD);
    expect(existsSync(path.join(root, 'etc/telematics-agent/.password.new'))).toBe(false);
    expect(existsSync(path.join(root, 'opt/telematics-agent/dist/cli/main.js'))).toBe(true);
    expect(existsSync(path.join(root, 'opt/telematics-agent.new'))).toBe(false);
    expect(existsSync(path.join(root, 'etc/telematics-agent/.config.json.new'))).toBe(false);
    // The manifest of the last good run stays; the lock is gone.
    expect(manifestBefore).toContain('run\tsystemctl enable telematics-agent.service');
    expect(readFileSync(path.join(root, 'provision-manifest.tsv'), 'utf8')).toBe(manifestBefore);
    expect(existsSync(path.join(root, 'run'))).toBe(false);
  });

  it('a van of a fleet image gets its own plate and driver from the installed copy of the script (README, fleet image)', () => {
    expect(first.status, first.out).toBe(0);
    const configFile = path.join(root, 'etc/telematics-agent/config.json');
    const before = JSON.parse(readFileSync(configFile, 'utf8')) as { device: Record<string, unknown> };
    const installed = path.join(root, 'opt/telematics-agent/scripts/provision.sh');
    const van = provision(root, ['--license-plate', 'VAN-042', '--driver-name', 'Sam Smit'], { script: installed });
    expect(van.status, van.out).toBe(0);
    expect(van.out).toContain('keeping the stored password');
    const after = JSON.parse(readFileSync(configFile, 'utf8')) as { device: Record<string, unknown> };
    expect(after).toEqual({ ...before, device: { ...before.device, licensePlate: 'VAN-042', driverName: 'Sam Smit' } });
    // The identity is not in the configuration: each gateway takes its own hardware serial at its first start.
    expect(after.device.externalDeviceId).toBeUndefined();
  });

  it('--uninstall removes the service and the program and keeps the data; --purge removes the rest', () => {
    expect(first.status, first.out).toBe(0);
    const db = path.join(root, 'var/lib/telematics-agent/agent.db');
    const un = provision(root, ['--uninstall']);
    expect(un.status, un.out).toBe(0);
    for (const gone of [
      'opt/telematics-agent',
      'etc/systemd/system/telematics-agent.service',
      'etc/systemd/system/telematics-agent.service.d',
      'usr/local/bin/telematics-agent',
      'etc/modules-load.d/telematics-agent.conf',
      'etc/tmpfiles.d/telematics-agent.conf',
      'etc/systemd/system/multi-user.target.wants/telematics-agent.service',
    ]) {
      expect(existsSync(path.join(root, gone)), gone).toBe(false);
    }
    expect(readFileSync(db, 'utf8')).toBe('identity, tokens and 3 buffered fixes');
    expect(readFileSync(path.join(root, 'etc/telematics-agent/password'), 'utf8')).toBe(PASSWORD);
    expect(manifest(root).lines).toContain('run\tsystemctl disable --now telematics-agent.service');

    const purge = provision(root, ['--uninstall', '--purge']);
    expect(purge.status, purge.out).toBe(0);
    for (const gone of ['var/lib/telematics-agent', 'etc/telematics-agent', 'etc/sysusers.d/telematics-agent.conf'])
      expect(existsSync(path.join(root, gone)), gone).toBe(false);
    expect(manifest(root).lines).toContain('run\tuserdel telematics-agent');
  });
});
