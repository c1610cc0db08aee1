import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { haveCommand } from './tools.js';

/**
 * A real systemd (Debian's /lib/systemd/systemd) booted as PID 1 of private PID, mount, UTS, IPC
 * and cgroup namespaces, the way a container manager does it, so that the unit can be started for
 * real on a machine whose own PID 1 is not systemd (this Firecracker VM runs /process_api; so
 * does CI). Nothing reaches the host:
 * - the root is an overlay of the host's / with a tmpfs upper layer: users, /etc, /opt and the
 *   journal written inside vanish with the namespace; `share` directories are bound in at the same
 *   path (the test's files, and the checkout or node when the overlay cannot show them);
 * - a fresh /proc whose /proc/sys is read-only (as systemd-nspawn does: no sysctl reaches the
 *   host kernel), a read-only /sys, a cgroup2 view rooted at a cgroup of our own, a minimal /dev
 *   with a private devpts, tmpfs /run and /tmp;
 * - units that would touch the shared kernel (modules-load, sysctl, binfmt) and all timers
 *   (apt, man-db...) are masked; the boot target needs only basic.target;
 * - the network namespace is shared: services reach a simulator on the host's 127.0.0.1.
 * `/` is made rshared before systemd starts. systemd does that itself only when it is not in a
 * container; without it the ramfs that LoadCredential= mounts from a helper's mount namespace
 * never shows in PID 1's, and the service finds an empty root-only credentials directory (EACCES).
 */

const SYSTEMD = '/lib/systemd/systemd';
const TARGET = 'ta-field-test.target';
const MASKED = [
  'systemd-modules-load.service',
  'systemd-sysctl.service',
  'systemd-binfmt.service',
  'proc-sys-fs-binfmt_misc.automount',
  'proc-sys-fs-binfmt_misc.mount',
  'sys-kernel-config.mount',
  'sys-kernel-debug.mount',
  'sys-kernel-tracing.mount',
  'sys-fs-fuse-connections.mount',
  'timers.target',
];
/** What commands run inside get: a clean environment with the host's node and npm on PATH. */
const INSIDE_PATH = [
  ...new Set([path.dirname(process.execPath), '/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin']),
].join(':');

const INSIDE_SCRIPT = String.raw`#!/bin/bash
# PID 1 of the new PID namespace until it execs systemd: builds the root, then pivots into it.
set -euo pipefail
W=$TA_WORK R=$TA_WORK/root
mount -t tmpfs -o mode=0755 ta-field-root "$W"
mkdir "$W/upper" "$W/work" "$R"
mount -t overlay overlay -o "lowerdir=/,upperdir=$W/upper,workdir=$W/work" "$R"
mount -t proc -o nosuid,nodev,noexec proc "$R/proc"
for p in "$R/proc/sys" "$R/proc/sysrq-trigger"; do
  [ -e "$p" ] || continue
  mount --bind "$p" "$p"
  mount -o remount,bind,ro "$p"
done
mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$R/sys"
mount -t cgroup2 -o nosuid,nodev,noexec cgroup2 "$R/sys/fs/cgroup"
mount -t tmpfs -o mode=0755,nosuid tmpfs "$R/dev"
for d in null zero full random urandom tty; do
  touch "$R/dev/$d"
  mount --bind "/dev/$d" "$R/dev/$d"
done
mkdir "$R/dev/pts" "$R/dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620,gid=5 devpts "$R/dev/pts"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$R/dev/shm"
ln -s pts/ptmx "$R/dev/ptmx"
ln -s /proc/self/fd "$R/dev/fd"
ln -s /proc/self/fd/0 "$R/dev/stdin"
ln -s /proc/self/fd/1 "$R/dev/stdout"
ln -s /proc/self/fd/2 "$R/dev/stderr"
mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs "$R/run"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$R/tmp"
while IFS= read -r p; do
  [ -n "$p" ] || continue
  mkdir -p "$R$p"
  mount --bind "$p" "$R$p"
done <<<"$TA_SHARE"
for u in $TA_MASK; do ln -sf /dev/null "$R/etc/systemd/system/$u"; done
printf '[Unit]\nDescription=Field test target (basic.target only)\nRequires=basic.target\nAfter=basic.target\n' >"$R/etc/systemd/system/$TA_TARGET"
cd "$R"
mkdir -p .ta-old-root
pivot_root . .ta-old-root
umount -l /.ta-old-root
rmdir /.ta-old-root
mount --make-rshared /
exec env -i container=telematics-agent-field-test PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  ${SYSTEMD} --unit="$TA_TARGET"
`;

export interface RunResult {
  status: number | null;
  stdout: string;
  stderr: string;
  /** stdout and stderr, for failure messages. */
  output: string;
}

export interface Container {
  /** Host PID of the namespace's PID 1 (systemd). */
  readonly pid: number;
  /** Runs a command inside (all of PID 1's namespaces, root /, cwd /) and waits for it. */
  run(argv: string[], options?: { env?: NodeJS.ProcessEnv; timeoutMs?: number }): RunResult;
  /** Runs a shell command inside; fails the caller with its output when it exits non-zero. */
  sh(script: string): string;
  /** What systemd printed before its journal ran, and the unshare/script errors. */
  consoleLog(): string;
  /** systemctl poweroff (PID 1 exits, the namespaces go), SIGKILL after a deadline; removes the cgroup. */
  shutdown(): Promise<void>;
}

/** The cgroup2 mount point and this process's cgroup in it, or the reason there is none. */
function cgroup2(): { mount: string; own: string } | string {
  const mount = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' '))
    .find((f) => f[f.indexOf('-') + 1] === 'cgroup2')?.[4];
  if (mount === undefined) return 'no cgroup2 hierarchy is mounted';
  const own = /^0::(\/.*)$/m.exec(readFileSync('/proc/self/cgroup', 'utf8'))?.[1];
  if (own === undefined) return 'this process has no cgroup2 path in /proc/self/cgroup';
  return { mount, own };
}

/** Why a container cannot be booted here, from cheap checks; undefined when it is worth trying. */
export function containerProblem(): string | undefined {
  if (process.platform !== 'linux') return 'not Linux';
  if (process.getuid?.() !== 0) return 'not root';
  if (!existsSync(SYSTEMD)) return `${SYSTEMD} is not installed (Debian package systemd)`;
  for (const tool of ['unshare', 'nsenter', 'pivot_root', 'systemctl', 'socat']) if (!haveCommand(tool)) return `${tool} is not installed`;
  if (!readFileSync('/proc/filesystems', 'utf8').includes('\toverlay\n')) return 'the kernel has no overlayfs';
  const cg = cgroup2();
  return typeof cg === 'string' ? cg : undefined;
}

/** The directories among `paths` that the overlay of / does not show: other file systems, or under a directory the container replaces. */
export function notInOverlay(paths: string[]): string[] {
  const mountOf = (p: string) => spawnSync('findmnt', ['-n', '-o', 'TARGET', '--target', p], { encoding: 'utf8' }).stdout.trim();
  return paths.filter((p) => existsSync(p) && (/^\/(tmp|run|dev|proc|sys)(\/|$)/.test(p) || mountOf(p) !== '/'));
}

/**
 * Boots systemd in new namespaces with `workDir` (an empty directory outside every `share`) for
 * its root, and waits until it has reached its target. Rejects with what systemd printed when it
 * does not get there within `timeoutMs`.
 */
export async function bootContainer(o: { workDir: string; share: string[]; timeoutMs?: number }): Promise<Container> {
  const cg = cgroup2();
  if (typeof cg === 'string') throw new Error(cg);
  const cgroupDir = path.join(cg.mount, cg.own, `ta-field-systemd-${process.pid}-${Date.now()}`);
  mkdirSync(cgroupDir);
  const script = path.join(o.workDir, 'inside.sh');
  const root = path.join(o.workDir, 'root-fs');
  mkdirSync(root);
  writeFileSync(script, INSIDE_SCRIPT, { mode: 0o755 });
  const logFile = path.join(o.workDir, 'console.log');
  const log = openSync(logFile, 'a');
  // The shell joins the new cgroup first, so that the cgroup namespace is rooted there.
  const unshare: ChildProcess = spawn(
    'bash',
    [
      '-c',
      'echo $$ >"$1/cgroup.procs" && exec unshare --pid --fork --kill-child --mount --uts --ipc --cgroup --propagation private bash "$2"',
      'ta-boot',
      cgroupDir,
      script,
    ],
    {
      stdio: ['ignore', log, log],
      env: { PATH: process.env.PATH, TA_WORK: root, TA_SHARE: o.share.join('\n'), TA_MASK: MASKED.join(' '), TA_TARGET: TARGET },
    },
  );
  closeSync(log);
  let exited = false;
  const gone = new Promise<void>((resolve) => unshare.once('exit', () => ((exited = true), resolve())));
  const consoleLog = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');

  const removeCgroup = async () => {
    const remove = (dir: string): void => {
      for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) remove(path.join(dir, e.name));
      rmdirSync(dir);
    };
    for (let i = 0; i < 40 && existsSync(cgroupDir); i++) {
      try {
        remove(cgroupDir);
      } catch {
        await sleep(100); // busy until the last process of the namespace is reaped
      }
    }
  };
  const kill = async () => {
    if (!exited) unshare.kill('SIGKILL'); // --kill-child: PID 1, hence the whole PID namespace, goes too
    await Promise.race([gone, sleep(5000)]);
    await removeCgroup();
  };

  // PID 1 is unshare's child; it is systemd once the script has exec'd.
  const deadline = Date.now() + (o.timeoutMs ?? 30_000);
  let pid = 0;
  while (pid === 0) {
    if (exited || Date.now() > deadline) {
      await kill();
      throw new Error(`systemd did not start in the namespace:\n${consoleLog()}`);
    }
    const children = readIfExists(`/proc/${unshare.pid}/task/${unshare.pid}/children`).trim();
    const first = Number(children.split(' ')[0]);
    if (first > 0 && readIfExists(`/proc/${first}/comm`).trim() === 'systemd') pid = first;
    else await sleep(50);
  }

  const run = (argv: string[], opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): RunResult => {
    const r: SpawnSyncReturns<string> = spawnSync('nsenter', ['--target', String(pid), '--all', '--', ...argv], {
      encoding: 'utf8',
      timeout: opts.timeoutMs ?? 30_000,
      env: {
        PATH: INSIDE_PATH,
        HOME: process.env.HOME ?? '/root',
        LANG: 'C.UTF-8',
        SYSTEMD_PAGER: '',
        SYSTEMD_COLORS: '0',
        NO_COLOR: '1',
        ...opts.env,
      },
    });
    const stdout = r.stdout ?? '';
    const stderr = `${r.stderr ?? ''}${r.error ? `\n${String(r.error)}` : ''}`;
    return { status: r.status, stdout, stderr, output: `${stdout}${stderr}` };
  };
  const container: Container = {
    pid,
    run,
    sh(scriptText) {
      const r = run(['bash', '-c', scriptText]);
      if (r.status !== 0) throw new Error(`inside the container, \`${scriptText}\` exited ${r.status}:\n${r.output}`);
      return r.stdout;
    },
    consoleLog,
    async shutdown() {
      if (!exited) run(['systemctl', 'poweroff', '--no-block'], { timeoutMs: 5000 });
      await Promise.race([gone, sleep(15_000)]);
      await kill();
    },
  };

  // Up when the boot job is done: "running", or "degraded" when some unit of the boot failed.
  let state = '';
  while (!['running', 'degraded'].includes(state)) {
    if (exited || Date.now() > deadline) {
      const journal = exited ? '' : run(['journalctl', '-b', '--no-pager', '-n', '60']).output;
      await kill();
      throw new Error(`systemd did not reach ${TARGET} (state "${state}"):\n${consoleLog()}\n${journal}`);
    }
    state = run(['systemctl', 'is-system-running', '--wait'], { timeoutMs: 10_000 }).stdout.trim();
    if (!['running', 'degraded'].includes(state)) await sleep(100);
  }
  return container;
}

function readIfExists(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
