import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { REPO_ROOT } from '../helpers/paths.js';
import { tempDir } from '../helpers/tmp.js';
import { haveCommand } from './tools.js';
import { DEVICE_URL, PASSWORD, provision } from './provision-run.js';

/**
 * scripts/provision.sh refuses a bad call before it changes anything: usage errors exit 2 with
 * their message and leave the target directory as it was (provision.test.ts runs the installs).
 */
describe('provision.sh refuses before changing anything', () => {
  it.each([
    [['--bogus'], 'unknown flag --bogus (see --help)'],
    [['--username'], '--username needs a value (see --help)'],
    [['stray'], 'unexpected argument "stray" (see --help)'],
    [['--environment', 'test'], '--environment must be production or staging, got "test"'],
    [['--wait-timeout', 'soon'], '--wait-timeout must be a whole number of seconds'],
    [['--purge'], '--purge goes with --uninstall'],
    [['--ca-file', '/nonexistent/ca.pem'], '--ca-file /nonexistent/ca.pem: cannot read it'],
    [['--ca-file', path.join(REPO_ROOT, 'package.json')], `--ca-file ${path.join(REPO_ROOT, 'package.json')} holds no PEM certificate`],
  ])('a usage error (%j) exits 2 with its message', (args, message) => {
    const root = tempDir('ta-provision-usage-');
    const r = provision(root, args);
    expect(r.status, r.out).toBe(2);
    expect(r.out).toContain(`provision: error: ${message}`);
    expect(readdirSync(root)).toEqual([]);
  });

  it('names the flags a first install lacks', () => {
    const root = tempDir('ta-provision-bare-');
    const r = provision(root, ['--username', 'acme-gateway', '--gnss-path', '/dev/ttyACM0']);
    expect(r.status).toBe(2);
    expect(r.out).toContain('a first install needs --external-system-id --carrier-code --device-url');
    expect(existsSync(path.join(root, 'etc/telematics-agent/config.json'))).toBe(false);
    expect(existsSync(path.join(root, 'opt'))).toBe(false);
  });

  it('refuses a --gnss-path that is not a device path: a newline would add directives to the drop-in', () => {
    for (const bad of ['/dev/ttyS1\nExecStartPre=/bin/touch /tmp/pwned', '/dev/tty S1', '/tmp/tty', '/dev/../etc/shadow']) {
      const root = tempDir('ta-provision-badpath-');
      const r = provision(root, ['--username', 'u', '--gnss-path', bad]);
      expect(r.status, r.out).not.toBe(0);
      expect(r.out).toContain('--gnss-path must be a device path under /dev');
      expect(existsSync(path.join(root, 'etc'))).toBe(false);
    }
  });

  it('refuses --gnss-path or --baud-rate with the gpsd source, and an unknown source', () => {
    for (const args of [
      ['--gnss-source', 'gpsd', '--gnss-path', '/dev/ttyACM0'],
      ['--gpsd', '127.0.0.1:2947', '--baud-rate', '9600'],
      ['--gnss-source', 'usb'],
      ['--gpsd', '127.0.0.1:2947\nExecStartPre=/bin/sh'],
    ]) {
      const root = tempDir('ta-provision-gpsdflags-');
      const r = provision(root, ['--username', 'u', ...args]);
      expect(r.status, r.out).toBe(2);
      expect(r.out).toMatch(
        /--gnss-path and --baud-rate are for the serial source|--gnss-source must be serial or gpsd|--gpsd must be HOST:PORT/,
      );
      expect(existsSync(path.join(root, 'etc'))).toBe(false);
    }
  });

  it('asks for a password it cannot prompt for', () => {
    const root = tempDir('ta-provision-nopw-');
    const r = provision(root, [
      '--username',
      'u',
      '--external-system-id',
      'e',
      '--carrier-code',
      'C',
      '--device-url',
      DEVICE_URL,
      '--gnss-path',
      '/dev/ttyACM0',
    ]);
    expect(r.status).toBe(2);
    expect(r.out).toContain('no password: pass --password-file FILE');
    // "exit 2: nothing was changed": no sysusers file, no /etc/telematics-agent, no manifest, no lock.
    expect(readdirSync(root)).toEqual([]);
  });

  it('a failed first install into a directory that did not exist leaves no directory behind', () => {
    const image = path.join(tempDir('ta-provision-fresh-'), 'image');
    const r = provision(image, ['--username', 'u', '--external-system-id', 'e', '--carrier-code', 'C', '--device-url', DEVICE_URL]);
    expect(r.status).toBe(2);
    expect(r.out).toContain('no password: pass --password-file FILE');
    expect(existsSync(image)).toBe(false);
  });

  it('a failed --gnss-path auto (no receiver answers) leaves nothing behind', () => {
    const work = tempDir('ta-provision-auto-');
    const root = path.join(work, 'root');
    mkdirSync(path.join(root, 'dev'), { recursive: true });
    writeFileSync(path.join(work, 'password'), `${PASSWORD}\n`, { mode: 0o600 });
    const r = provision(root, [
      '--username',
      'u',
      '--external-system-id',
      'e',
      '--carrier-code',
      'C',
      '--device-url',
      DEVICE_URL,
      '--password-file',
      path.join(work, 'password'),
      '--gnss-path',
      'auto',
    ]);
    expect(r.status).toBe(1);
    expect(r.out).toContain('no receiver sent NMEA on /dev/ttyACM*');
    expect(r.out).not.toContain(PASSWORD);
    expect(readdirSync(root)).toEqual(['dev']);
    expect(readdirSync(path.join(root, 'dev'))).toEqual([]);
  });

  it.skipIf(!haveCommand('flock'))('a second run while one holds the lock is refused and leaves the holder its lock', () => {
    const root = tempDir('ta-provision-locked-');
    const lock = path.join(root, 'run', 'telematics-agent-provision.lock');
    mkdirSync(path.dirname(lock));
    const held = spawn('flock', [lock, 'sleep', '60'], { stdio: 'ignore' });
    onTestFinished(() => {
      held.kill();
    });
    const deadline = Date.now() + 10_000;
    while (spawnSync('flock', ['--nonblock', lock, 'true']).status === 0) {
      if (Date.now() > deadline) throw new Error('the holder did not take the lock');
    }
    const r = provision(root, ['--username', 'u', '--gnss-path', '/dev/ttyACM0']);
    expect(r.status).toBe(1);
    expect(r.out).toContain('another provisioning run is in progress');
    expect(existsSync(lock)).toBe(true);
    expect(readdirSync(root)).toEqual(['run']);
  });
});
