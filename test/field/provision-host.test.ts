import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/paths.js';
import { tempDir } from '../helpers/tmp.js';

/**
 * scripts/provision.sh without --root, as on a gateway: real chown, a real user from
 * systemd-sysusers, the systemctl sequence. It runs in a private mount namespace whose /etc, /opt,
 * /usr/local and /var/lib are overlays with throwaway upper layers and whose /run is a fresh
 * tmpfs, so nothing reaches this machine. systemctl (no systemd as PID 1 here) and modprobe (a
 * real one could load modules into the host kernel) are stand-ins that log their calls.
 * Needs root and mount namespaces with overlayfs; skips with a notice otherwise.
 */

const SCRIPT = path.join(REPO_ROOT, 'scripts', 'provision.sh');
const PASSWORD = 'host-Mode-Secret-9';
const SHADOWED = ['/etc', '/opt', '/usr/local', '/var/lib'];

function sandboxProblem(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root';
  for (const p of ['/etc/telematics-agent', '/opt/telematics-agent']) if (existsSync(p)) return `${p} exists on this machine`;
  if (/^telematics-agent:/m.test(readFileSync('/etc/passwd', 'utf8'))) return 'the user telematics-agent exists on this machine';
  const probe = spawnSync(
    'unshare',
    [
      '-m',
      '--propagation',
      'private',
      'sh',
      '-c',
      'd=$(mktemp -d) && mkdir $d/u $d/w && mount -t overlay overlay -o lowerdir=/opt,upperdir=$d/u,workdir=$d/w /opt; r=$?; rm -rf $d; exit $r',
    ],
    { encoding: 'utf8' },
  );
  if (probe.status !== 0) return `no private mount namespace with overlayfs here (${(probe.stderr || String(probe.error ?? '')).trim()})`;
  return undefined;
}

const problem = sandboxProblem();
if (problem) process.stderr.write(`skipping provision.sh on a sandboxed host: ${problem}\n`);

describe.skipIf(problem !== undefined)('provision.sh on a (sandboxed) host', () => {
  it('installs with real owners and user, upgrades a running service, and purges', () => {
    const dir = tempDir('ta-host-');
    const bin = path.join(dir, 'bin');
    mkdirSync(bin);
    // is-active answers from a file, so the second run finds the service running.
    writeFileSync(
      path.join(bin, 'systemctl'),
      `#!/bin/sh\necho "systemctl $*" >> ${dir}/calls\ncase "$1" in is-active) [ -f ${dir}/active ] && exit 0; exit 3;; start|restart) touch ${dir}/active;; stop) rm -f ${dir}/active;; esac\nexit 0\n`,
    );
    writeFileSync(path.join(bin, 'modprobe'), `#!/bin/sh\necho "modprobe $*" >> ${dir}/calls\n`);
    chmodSync(path.join(bin, 'systemctl'), 0o755);
    chmodSync(path.join(bin, 'modprobe'), 0o755);
    writeFileSync(path.join(dir, 'password'), `${PASSWORD}\n`, { mode: 0o600 });

    const mounts = SHADOWED.map(
      (lower, i) =>
        `mkdir -p ${dir}/up${i} ${dir}/work${i} && mount -t overlay overlay -o lowerdir=${lower},upperdir=${dir}/up${i},workdir=${dir}/work${i} ${lower}`,
    ).join('\n');
    const provision = `bash ${SCRIPT} --node ${process.execPath} --wait-timeout 0`;
    writeFileSync(
      path.join(dir, 'inside.sh'),
      `set -eu
${mounts}
mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/system
# A gateway's root has /usr/local/bin on its PATH (Debian's default, sudo's secure_path), where the
# wrapper goes; a test runner's PATH may not (a hand-made one did: 'telematics-agent: not found').
export PATH=${bin}:/usr/local/bin:$PATH npm_config_offline=true npm_config_update_notifier=false
${provision} --username gw --password-file ${dir}/password --external-system-id acme --carrier-code ACME --device-url https://devices.example.com/api/public/v2/ --gnss-path /dev/ttyACM0
echo "== installed"
stat -c 'OWNER %n %U:%G %a' /etc/telematics-agent /etc/telematics-agent/config.json /etc/telematics-agent/password /var/lib/telematics-agent /opt/telematics-agent /usr/local/bin/telematics-agent
echo "GROUPS $(id -nG telematics-agent)"
echo "SHELL $(getent passwd telematics-agent | cut -d: -f7)"
telematics-agent config check --quiet && echo "WRAPPER ok"
echo "buffered fixes" > /var/lib/telematics-agent/agent.db && chown telematics-agent: /var/lib/telematics-agent/agent.db
touch ${dir}/active
${provision} --license-plate NEW-1
echo "== upgraded"
stat -c 'OWNER %n %U:%G %a' /var/lib/telematics-agent/agent.db
echo "DATA $(cat /var/lib/telematics-agent/agent.db)"
${provision} --uninstall --purge
echo "== purged"
getent passwd telematics-agent || echo "USER gone"
for p in /etc/telematics-agent /var/lib/telematics-agent /opt/telematics-agent; do [ -e $p ] || echo "GONE $p"; done
`,
    );
    const r = spawnSync('unshare', ['-m', '--propagation', 'private', 'bash', path.join(dir, 'inside.sh')], {
      encoding: 'utf8',
      timeout: 180_000,
    });
    const out = `${r.stdout}${r.stderr}`;
    expect(r.status, out).toBe(0);
    expect(out).not.toContain(PASSWORD);

    const owners = new Map([...out.matchAll(/^OWNER (\S+) (\S+) (\d+)$/gm)].map((m) => [m[1], `${m[3]} ${m[2]}`]));
    expect(Object.fromEntries(owners)).toEqual({
      '/etc/telematics-agent': '750 root:telematics-agent',
      '/etc/telematics-agent/config.json': '640 root:telematics-agent',
      '/etc/telematics-agent/password': '600 root:root',
      '/var/lib/telematics-agent': '700 telematics-agent:telematics-agent',
      '/opt/telematics-agent': '755 root:root',
      '/usr/local/bin/telematics-agent': '755 root:root',
      '/var/lib/telematics-agent/agent.db': '644 telematics-agent:telematics-agent',
    });
    expect(out).toMatch(/^GROUPS telematics-agent dialout gpio$/m);
    expect(out).toMatch(/^SHELL \/usr\/sbin\/nologin$/m);
    expect(out).toMatch(/^WRAPPER ok$/m);
    expect(out).not.toMatch(/not on this shell's PATH|on this shell's PATH is/);
    expect(out).toMatch(/^DATA buffered fixes$/m);
    expect(out).toMatch(/^USER gone$/m);
    for (const p of ['/etc/telematics-agent', '/var/lib/telematics-agent', '/opt/telematics-agent']) expect(out).toContain(`GONE ${p}`);

    const calls = readFileSync(path.join(dir, 'calls'), 'utf8').trim().split('\n');
    const firstRun = calls.slice(0, calls.indexOf('systemctl restart telematics-agent.service') + 1);
    expect(firstRun.filter((c) => !c.startsWith('systemctl is-active'))).toEqual([
      'modprobe -a cdc_acm usbserial',
      'systemctl daemon-reload',
      'systemctl enable --quiet telematics-agent.service',
      'systemctl restart telematics-agent.service',
    ]);
    // The upgrade stops the running service only after the new program and configuration passed
    // their checks, and starts it again.
    const upgrade = calls
      .slice(firstRun.length, calls.lastIndexOf('systemctl restart telematics-agent.service') + 1)
      .filter((c) => !c.startsWith('systemctl is-active') && !c.startsWith('modprobe'));
    expect(upgrade).toEqual([
      'systemctl stop telematics-agent.service',
      'systemctl daemon-reload',
      'systemctl enable --quiet telematics-agent.service',
      'systemctl restart telematics-agent.service',
    ]);
    expect(calls.slice(-3)).toEqual([
      'systemctl disable --now --quiet telematics-agent.service',
      'systemctl daemon-reload',
      'systemctl reset-failed telematics-agent.service',
    ]);

    // Nothing reached this machine.
    expect(existsSync('/etc/telematics-agent')).toBe(false);
    expect(existsSync('/opt/telematics-agent')).toBe(false);
    expect(readFileSync('/etc/passwd', 'utf8')).not.toMatch(/^telematics-agent:/m);
  }, 200_000);
});
