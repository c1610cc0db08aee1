import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, REPO_ROOT } from '../helpers/paths.js';
import { haveCommand } from './tools.js';
import { bootContainer, containerProblem, notInOverlay, sleep, type Container } from './systemd-container.js';
import { EPOCH_FEEDER, simAdmin, startSim, type Sim } from './gateway-sim.js';

/**
 * An upgrade of the Debian package on a running gateway, with real dpkg and a real systemd (PID 1
 * of private namespaces, systemd-container.ts): the amd64 package as `npm run package` builds it,
 * installed by provision.sh as a package built before this change (its prerm, which stopped the
 * service only on remove), running against the platform simulator with a backlog held by a
 * platform outage; then `dpkg --unpack` of the current package must leave the old daemon stopped
 * cleanly (exit 0, the outbox committed) before a file is replaced, `dpkg --configure` start the
 * new one, and the backlog be delivered once, with no new password grant.
 * Why the service is stopped before the unpack: docs/decisions/debian-package.md.
 * Needs root, systemd, socat and dpkg-deb, and x64 Node 20 (the package reuses the checkout's
 * better-sqlite3 build); skips with a notice elsewhere.
 */

const UNIT = 'telematics-agent.service';
const PASSWORD = 'upgrade-Test-Secret-3';
const GNSS = '/dev/ttyGNSS0';
const NPM_CACHE = process.env.npm_config_cache ?? path.join(os.homedir(), '.npm');

const skip =
  containerProblem() ??
  (!haveCommand('dpkg-deb')
    ? 'dpkg-deb is not installed'
    : process.arch !== 'x64' || process.versions.modules !== '115'
      ? `the amd64 package reuses the checkout's build, which needs x64 Node 20 (this is ${process.arch}, ABI ${process.versions.modules})`
      : undefined);
if (skip) process.stderr.write(`skipping the package upgrade under systemd: ${skip}\n`);

/** The prerm of the packages built before this change: it stopped the service only on remove. */
const OLD_PRERM = `#!/bin/sh
set -e
if [ "$1" = remove ] && [ -d /run/systemd/system ] && [ -z "\${DPKG_ROOT:-}" ]; then
  deb-systemd-invoke stop telematics-agent.service >/dev/null || true
fi
exit 0
`;

interface Stats {
  passwordGrants: number;
  duplicates: number;
}

interface Snapshot {
  source: 'daemon' | 'database';
  outbox: { pending: number; deadLetters: number; sentTotal?: number };
}

describe.skipIf(skip !== undefined)('a package upgrade on a running gateway (dpkg and systemd for real)', () => {
  let dir = '';
  let share = '';
  let box: Container | undefined;
  let sim: Sim | undefined;
  let version = '';
  let oldPid = 0;
  let grantsBefore = 0;
  let pendingAtStop = 0;
  let sentBeforeOutage = 0;

  const c = (): Container => {
    if (!box) throw new Error('no container');
    return box;
  };
  const show = (...props: string[]): Record<string, string> =>
    Object.fromEntries(
      c()
        .sh(`systemctl show ${UNIT} ${props.map((p) => `-p ${p}`).join(' ')}`)
        .trim()
        .split('\n')
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
  const journal = () => c().run(['journalctl', '-u', UNIT, '-o', 'cat', '--no-pager']).stdout;
  const snapshot = (): Snapshot => {
    const r = c().run(['telematics-agent', 'status', '--json']);
    return JSON.parse(r.stdout) as Snapshot;
  };
  /** Polls `check` every 250 ms until it returns a value other than undefined, or fails after `ms`. */
  async function waitFor<T>(what: string, ms: number, check: () => T | undefined | Promise<T | undefined>): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const v = await check();
      if (v !== undefined) return v;
      if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}\n${journal().slice(-3000)}`);
      await sleep(250);
    }
  }

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'ta-upgrade-'));
    share = path.join(dir, 'share');
    mkdirSync(share);
    // The package of this checkout, and the same package as built before this change (its prerm).
    const build = spawnSync('bash', [path.join(REPO_ROOT, 'scripts/package-deb.sh'), '--arch', 'amd64', '--out', share], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      env: { ...process.env, npm_config_offline: 'true', npm_config_update_notifier: 'false' },
      timeout: 170_000,
    });
    expect(build.status, `${build.stdout}${build.stderr}`).toBe(0);
    const newDeb = build.stdout.trim().split('\n').pop() ?? '';
    version = spawnSync('dpkg-deb', ['-f', newDeb, 'Version'], { encoding: 'utf8' }).stdout.trim();
    const oldTree = path.join(dir, 'old-tree');
    expect(spawnSync('dpkg-deb', ['-R', newDeb, oldTree]).status).toBe(0);
    writeFileSync(path.join(oldTree, 'DEBIAN/prerm'), OLD_PRERM, { mode: 0o755 });
    const control = path.join(oldTree, 'DEBIAN/control');
    writeFileSync(control, readFileSync(control, 'utf8').replace(/^Version: .*$/m, `Version: ${version}~before`));
    const pack = spawnSync('dpkg-deb', ['--root-owner-group', '-Zgzip', '--build', oldTree, path.join(share, 'old.deb')], {
      encoding: 'utf8',
    });
    expect(pack.status, pack.stderr).toBe(0);
    rmSync(oldTree, { recursive: true, force: true });
    writeFileSync(path.join(share, 'new.deb'), readFileSync(newDeb));
    // A drive that outlasts the test: 15 min at 1 Hz, fed at 5 epochs per second (180 s).
    const drive = spawnSync(process.execPath, [CLI, 'drive', '-o', path.join(share, 'drive.nmea'), '-m', '15'], { encoding: 'utf8' });
    expect(drive.status, drive.stderr).toBe(0);
    writeFileSync(path.join(share, 'feed.mjs'), EPOCH_FEEDER);
    writeFileSync(path.join(share, 'password'), `${PASSWORD}\n`, { mode: 0o600 });
    sim = await startSim(PASSWORD);
    const node = path.dirname(path.dirname(realpathSync(process.execPath)));
    box = await bootContainer({ workDir: dir, share: [share, ...notInOverlay([REPO_ROOT, node, NPM_CACHE])] });
  }, 240_000);

  afterAll(async () => {
    await box?.shutdown();
    sim?.child.kill();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  it('runs the old package, installed by provision.sh, with a backlog held by a platform outage', async () => {
    const b = c();
    // A container image's policy-rc.d (exit 101: start nothing) would turn the maintainer scripts'
    // deb-systemd-invoke into no-ops; a gateway has none. Removed from the overlay only.
    b.sh('rm -f /usr/sbin/policy-rc.d');
    b.sh(
      `systemd-run --quiet --unit=ta-gnss-feed socat EXEC:"${process.execPath} ${share}/feed.mjs ${share}/drive.nmea 200" PTY,link=${GNSS},raw,echo=0,group=dialout,perm=0660`,
    );
    b.sh(`for i in $(seq 50); do [ -e ${GNSS} ] && exit 0; sleep 0.1; done; exit 1`);
    // Every fix that passes the gate is recorded, so that the outage builds a backlog in seconds.
    b.sh(`mkdir -p /etc/telematics-agent && cat >/etc/telematics-agent/config.json <<'EOF'
${JSON.stringify({ platform: { authUrl: sim?.urls.authUrl, planningUrl: sim?.urls.planningUrl }, dataDir: '/var/lib/telematics-agent', recording: { mode: 'all' } })}
EOF`);
    const provision = b.run(
      [
        'bash',
        path.join(REPO_ROOT, 'scripts', 'provision.sh'),
        '--package',
        path.join(share, 'old.deb'),
        '--environment',
        'staging',
        '--username',
        'gateway',
        '--password-file',
        path.join(share, 'password'),
        '--external-system-id',
        'field-fleet',
        '--carrier-code',
        'SIM',
        '--device-url',
        sim?.urls.deviceUrl ?? '',
        '--gnss-path',
        GNSS,
        '--wait-timeout',
        '60',
      ],
      { timeoutMs: 150_000 },
    );
    expect(provision.status, `${provision.output}\n${journal()}`).toBe(0);
    expect(b.sh("dpkg-query -W -f '${Version} ${Status}' telematics-agent")).toBe(`${version}~before install ok installed`);
    expect(show('ActiveState', 'SubState')).toEqual({ ActiveState: 'active', SubState: 'running' });
    oldPid = Number(show('MainPID').MainPID);

    // Some fixes delivered, then the platform answers 503 until the upgrade is over.
    sentBeforeOutage = await waitFor('a first delivery', 60_000, () => {
      const sent = snapshot().outbox.sentTotal ?? 0;
      return sent > 0 ? sent : undefined;
    });
    await simAdmin(sim as Sim, 'faults', { method: 'POST', body: JSON.stringify({ events: { status503Rate: 1 } }) });
    await waitFor('a backlog of 10 fixes', 60_000, () => (snapshot().outbox.pending >= 10 ? true : undefined));
    grantsBefore = (await simAdmin<Stats>(sim as Sim, 'stats')).passwordGrants;
    expect(grantsBefore).toBe(1);
  }, 240_000);

  it('stops the old daemon cleanly before unpacking the new program, and starts the new one at configure', () => {
    const b = c();
    const started = Date.now();
    const unpack = b.run(['dpkg', '--unpack', path.join(share, 'new.deb')], { timeoutMs: 60_000 });
    const unpackMs = Date.now() - started;
    expect(unpack.status, unpack.output).toBe(0);
    // The new files are on disk, not configured yet: the old daemon must not be running over them.
    expect(b.sh("dpkg-query -W -f '${Version} ${Status}' telematics-agent")).toBe(`${version} install ok unpacked`);
    expect(show('ActiveState', 'Result', 'ExecMainStatus'), journal()).toEqual({
      ActiveState: 'inactive',
      Result: 'success',
      ExecMainStatus: '0',
    });
    expect(b.run(['kill', '-0', String(oldPid)]).status).not.toBe(0);
    // Its SIGTERM stop committed the outbox; the backlog waits in the database.
    expect(journal()).toMatch(/"msg":"agent stopped"/);
    const stopped = snapshot();
    expect(stopped.source).toBe('database');
    pendingAtStop = stopped.outbox.pending;
    expect(pendingAtStop).toBeGreaterThanOrEqual(10);

    const configureStarted = Date.now();
    const configure = b.run(['dpkg', '--configure', 'telematics-agent'], { timeoutMs: 120_000 });
    process.stdout.write(
      `upgrade: dpkg --unpack ${unpackMs} ms (the old daemon's stop included, ${pendingAtStop} fixes pending), dpkg --configure ${Date.now() - configureStarted} ms\n`,
    );
    expect(configure.status, `${configure.output}\n${journal()}`).toBe(0);
    expect(b.sh("dpkg-query -W -f '${Version} ${Status}' telematics-agent")).toBe(`${version} install ok installed`);
    const s = show('ActiveState', 'SubState', 'MainPID');
    expect(s, journal()).toMatchObject({ ActiveState: 'active', SubState: 'running' });
    expect(Number(s.MainPID)).not.toBe(oldPid);
  }, 200_000);

  it('delivers the backlog once after the upgrade, without a new password grant', async () => {
    await simAdmin(sim as Sim, 'faults', { method: 'DELETE' });
    const drained = await waitFor('the backlog delivered', 120_000, () => {
      const s = snapshot();
      return s.source === 'daemon' && s.outbox.pending === 0 && (s.outbox.sentTotal ?? 0) >= sentBeforeOutage + pendingAtStop
        ? s
        : undefined;
    });
    expect(drained.outbox.deadLetters).toBe(0);
    const stats = await simAdmin<Stats>(sim as Sim, 'stats');
    expect(stats.duplicates).toBe(0);
    // The token kept in the database outlived the upgrade: no second password grant.
    expect(stats.passwordGrants).toBe(grantsBefore);
  }, 150_000);
});
