import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, REPO_ROOT } from '../helpers/paths.js';
import { tempDir } from '../helpers/tmp.js';
import { UNIT_NODE, skipWithout, verifyUnit } from './tools.js';

const UNIT = path.join(REPO_ROOT, 'systemd', 'telematics-agent.service');
const SYSUSERS = path.join(REPO_ROOT, 'systemd', 'telematics-agent.sysusers.conf');
const MAX_EXPOSURE = 2.0;

/** The unit's [Service] settings as key -> values (keys may repeat). */
function serviceSettings(): Map<string, string[]> {
  const settings = new Map<string, string[]>();
  let section = '';
  for (const raw of readFileSync(UNIT, 'utf8').split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith('[')) {
      section = line;
      continue;
    }
    if (section !== '[Service]') continue;
    const eq = line.indexOf('=');
    const key = line.slice(0, eq);
    settings.set(key, [...(settings.get(key) ?? []), line.slice(eq + 1)]);
  }
  return settings;
}

/** A copy of the unit, named as installed, whose ExecStart node exists on this machine. */
function unitCopy(dropin = ''): string {
  const dir = tempDir('ta-unit-');
  const file = path.join(dir, 'telematics-agent.service');
  // A drop-in's settings apply after the unit's, as a [Service] section at its end does.
  writeFileSync(file, `${readFileSync(UNIT, 'utf8').replace(/^ExecStart=\/usr\/bin\/node /m, `ExecStart=${UNIT_NODE} `)}\n${dropin}`);
  return file;
}

const GPSD_DROPIN = path.join(path.dirname(UNIT), 'telematics-agent.gpsd.conf');

describe('systemd unit', () => {
  it.skipIf(skipWithout('systemd-analyze', 'systemd-analyze verify'))('passes systemd-analyze verify without a single remark', () => {
    const r = verifyUnit(unitCopy());
    expect(r.output).toBe('');
    expect(r.status).toBe(0);
  });

  it.skipIf(skipWithout('systemd-analyze', 'systemd-analyze security'))(
    `has a systemd-analyze security exposure of at most ${MAX_EXPOSURE}`,
    () => {
      const r = spawnSync('systemd-analyze', ['security', '--offline=true', '--no-pager', unitCopy()], { encoding: 'utf8' });
      const m = /Overall exposure level for telematics-agent\.service: (\d+\.\d+)/.exec(`${r.stdout}${r.stderr}`);
      expect(m, `no exposure figure in:\n${r.stdout}${r.stderr}`).not.toBeNull();
      const exposure = Number(m?.[1]);
      process.stdout.write(`systemd-analyze security --offline=true: exposure ${exposure} (limit ${MAX_EXPOSURE})\n`);
      expect(exposure).toBeLessThanOrEqual(MAX_EXPOSURE);
    },
  );

  it.skipIf(skipWithout('systemd-analyze', 'systemd-analyze security'))(
    `with the gpsd drop-in (gnss.gpsd): verifies, reaches gpsd on loopback, exposure at most ${MAX_EXPOSURE}`,
    () => {
      const unit = unitCopy(readFileSync(GPSD_DROPIN, 'utf8'));
      expect(verifyUnit(unit)).toEqual({ status: 0, output: '' });
      const r = spawnSync('systemd-analyze', ['security', '--offline=true', '--no-pager', unit], { encoding: 'utf8' });
      const exposure = Number(/Overall exposure level for telematics-agent\.service: (\d+\.\d+)/.exec(`${r.stdout}${r.stderr}`)?.[1]);
      process.stdout.write(`systemd-analyze security --offline=true, gpsd drop-in: exposure ${exposure} (limit ${MAX_EXPOSURE})\n`);
      expect(exposure).toBeLessThanOrEqual(MAX_EXPOSURE);
      const s = serviceSettings();
      // 127.0.0.1:2947 needs AF_INET (and [::1] AF_INET6); nothing filters loopback addresses.
      expect(s.get('RestrictAddressFamilies')?.join(' ')).toMatch(/AF_INET\b.*AF_INET6/);
      expect(s.get('IPAddressDeny')).toBeUndefined();
    },
  );

  it('keeps the settings the service depends on', () => {
    const s = serviceSettings();
    expect(s.get('Type')).toEqual(['notify']);
    expect(s.get('WatchdogSec')).toHaveLength(1);
    expect(s.get('Restart')).toEqual(['always']);
    expect(s.get('RestartSec')).toHaveLength(1);
    // SIGTERM to the daemon alone: on control-group the systemd-notify it spawns for STOPPING=1
    // is caught by the same SIGTERM (seen under a real systemd: systemd-boot.test.ts).
    expect(s.get('KillMode')).toEqual(['mixed']);
    expect(s.get('User')).toEqual(['telematics-agent']);
    expect(s.get('SupplementaryGroups')).toEqual(['dialout']);
    expect(s.get('StateDirectory')).toEqual(['telematics-agent']);
    expect(s.get('StateDirectoryMode')).toEqual(['0700']);
    expect(s.get('ConfigurationDirectory')).toEqual(['telematics-agent']);
    expect(s.get('RuntimeDirectory')).toEqual(['telematics-agent']);
    expect(s.get('LoadCredential')).toEqual(['password:/etc/telematics-agent/password']);
    expect(s.get('RestrictAddressFamilies')).toEqual(['AF_INET AF_INET6 AF_UNIX']);
    expect(s.get('DevicePolicy')).toEqual(['closed']);
    expect(s.get('ExecStart')?.[0]).toMatch(
      /^\/usr\/bin\/node --liftoff-only --no-opt --no-maglev \/opt\/telematics-agent\/dist\/cli\/main\.js run --config \/etc\/telematics-agent\/config\.json$/,
    );
    // V8's JIT needs writable-then-executable memory: "yes" would crash node at start.
    expect(s.get('MemoryDenyWriteExecute')).toEqual(['no']);
  });

  it('writes no core dump (it would hold the password and tokens) and has a fixed open-file budget', () => {
    const s = serviceSettings();
    expect(s.get('LimitCORE')).toEqual(['0']);
    const nofile = Number(s.get('LimitNOFILE')?.[0]);
    expect(nofile).toBeGreaterThanOrEqual(1024);
    expect(nofile).toBeLessThanOrEqual(65536);
  });

  it('allows the serial ports a receiver appears on, and not the virtual consoles', () => {
    const allowed = serviceSettings().get('DeviceAllow') ?? [];
    for (const port of ['char-ttyACM rw', 'char-ttyUSB rw', 'char-ttyAMA rw', '/dev/serial0 rw']) expect(allowed).toContain(port);
    // ignition.gpio's tools open the GPIO chips read-write.
    expect(allowed).toContain('char-gpiochip rw');
    // ttyS shares major 4 with /dev/tty0..63: allowing the class would open the consoles.
    expect(allowed.filter((a) => /char-tty(S|\s)|char-tty$/.test(a))).toEqual([]);
    // Classes resolve through /proc/devices at start: their drivers load at boot, not at plug-in.
    const modules = readFileSync(path.join(REPO_ROOT, 'systemd', 'telematics-agent.modules-load.conf'), 'utf8')
      .split('\n')
      .filter((l) => l !== '' && !l.startsWith('#'));
    expect(modules.sort()).toEqual(['cdc_acm', 'usbserial']);
  });

  it('hands the password over under the name the configuration loader reads', () => {
    const id = (serviceSettings().get('LoadCredential')?.[0] ?? '').split(':')[0] ?? '';
    const dir = tempDir('ta-cred-');
    const creds = path.join(dir, 'credentials');
    mkdirSync(creds, { mode: 0o700 });
    writeFileSync(path.join(creds, id), 'from-systemd\n', { mode: 0o600 });
    const config = path.join(dir, 'config.json');
    // As provision.sh writes it: passwordFile names the root-only file the service cannot read.
    writeFileSync(
      config,
      JSON.stringify({
        platform: { deviceUrl: 'https://devices.example.com/api/public/v2/' },
        credentials: { username: 'gateway', passwordFile: path.join(dir, 'absent-password') },
        device: { externalSystemId: 'acme', carrierCode: 'ACME' },
        gnss: { path: '/dev/ttyACM0' },
      }),
    );
    const run = (env: NodeJS.ProcessEnv) =>
      spawnSync(process.execPath, [CLI, 'config', 'check', '--config', config], {
        encoding: 'utf8',
        env: { PATH: process.env.PATH, ...env },
      });
    const withCredential = run({ CREDENTIALS_DIRECTORY: creds });
    expect(withCredential.stderr).toContain('is valid');
    expect(withCredential.status).toBe(0);
    expect(withCredential.stderr).toContain(`the password comes from the systemd credential ${path.join(creds, 'password')}`);
    // The printed file names no password key of its own: the credential supplies it.
    expect(JSON.parse(withCredential.stdout).credentials).toEqual({ username: 'gateway' });
  });

  it.skipIf(skipWithout('systemd-sysusers', 'the sysusers.d entry'))(
    'creates a nologin system user in dialout from its sysusers.d entry',
    () => {
      const root = tempDir('ta-sysusers-');
      mkdirSync(path.join(root, 'etc'));
      // A typical Debian group file: dialout exists with its usual GID.
      writeFileSync(path.join(root, 'etc', 'group'), 'root:x:0:\ndialout:x:20:\n');
      writeFileSync(path.join(root, 'etc', 'passwd'), 'root:x:0:0:root:/root:/bin/bash\n');
      const r = spawnSync('systemd-sysusers', [`--root=${root}`, SYSUSERS], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      const user = readFileSync(path.join(root, 'etc', 'passwd'), 'utf8')
        .split('\n')
        .find((l) => l.startsWith('telematics-agent:'));
      const [, , uid, , , home, shell] = (user ?? '').split(':');
      expect(Number(uid)).toBeLessThan(1000); // a system account
      expect(home).toBe('/var/lib/telematics-agent');
      expect(shell).toBe('/usr/sbin/nologin');
      expect(readFileSync(path.join(root, 'etc', 'group'), 'utf8')).toMatch(/^dialout:x:20:telematics-agent$/m);
      // ignition.gpio: the gpio group (Raspberry Pi OS's owner of /dev/gpiochip*), made where absent.
      expect(readFileSync(path.join(root, 'etc', 'group'), 'utf8')).toMatch(/^gpio:x:\d+:telematics-agent$/m);
    },
  );
});
