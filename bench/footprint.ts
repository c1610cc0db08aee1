/**
 * npm run bench:footprint [-- --minutes 5 | --quick | --seconds 90] [--tls] [--held] [--env K=V ...] [--node-args "..."] [--root DIR]
 *
 * The daemon's footprint on a gateway: `run` started as the systemd unit starts it (the unit's
 * Environment= lines, NODE_OPTIONS included, and node's flags in its ExecStart, read from
 * systemd/telematics-agent.service), with the
 * default configuration (only the simulator's addresses, the account, the device and a replayed
 * 10 Hz drive in real time), against the platform simulator in this process (plain HTTP; `--tls`:
 * TLS with h2 and a throwaway CA, as a gateway talks to the platform). Printed, never asserted.
 *
 * Beside it, in the same run and with the same environment and node flags, the baselines: a bare `node` and a
 * `node` that has loaded the daemon's two large libraries (better-sqlite3 with a database open,
 * undici's dispatcher files with a pool, as the daemon imports them), idle. Figures:
 * - RSS when the status socket first answers, the peak (VmHWM: start included), at each minute.
 * - Start: from spawn to the status socket answering (polled every 25 ms).
 * - Storage writes per driving hour: write_bytes of /proc/PID/io (what the process sends to the
 *   block layer, before the file system's journal) from ready to the end, scaled to an hour.
 * - CPU: utime + stime from ready to the end, as a share of one core.
 * Assumes the data directory on a disk (os.tmpdir(); tmpfs would count no writes) and an otherwise
 * quiet machine: on a loaded one the start time grows, the RSS barely.
 * `--held`: fixes held in memory, the held-memory budget's case: the data directory a tmpfs mounted
 * read-only (root only), the platform down (the simulator stopped before the daemon starts),
 * `recording.mode: "all"` and the drive replayed at 20x (200 fixes/s), so that the outbox's
 * in-memory buffer reaches its bound (MAX_BUFFER_WHILE_FULL rows) within about 3 minutes.
 * `--held --drive-minutes 240 [--speed 30] [--every 30] [--drain]`: a long read-only spell,
 * sampled by the drive's clock (held-spell.ts), the heap and ArrayBuffers besides RSS; `--speed`
 * is the replay's pace (default 20x), which the spell's samples say when the daemon falls behind it.
 * `--node-options "..."` replaces the unit's NODE_OPTIONS (to weigh V8 flags); `--node-args "..."`
 * replaces the unit's node flags (V8 flags NODE_OPTIONS refuses); `--env K=V`
 * (repeatable) adds to the unit's environment (MALLOC_ARENA_MAX=2, UV_THREADPOOL_SIZE=1);
 * `--seconds N` (or FOOTPRINT_SECONDS) a shorter run, sampled every 10 s; `--cli FILE` runs
 * another build's dist/cli/main.js.
 * `--node BIN` runs the three processes on another node binary (an official release of another
 * major); with it, `--cli` names an unpacked package's dist/cli/main.js, whose better-sqlite3
 * carries a build per Node ABI (the baseline loads the same one). `--majors`: the whole run once
 * per Node major the amd64 package serves (footprint-majors.ts), and a table of them.
 * `--root DIR` (root only): the three processes run on another system's node, the one a package
 * runs on: `chroot DIR /usr/bin/node ...` (major 20), each in its own mount namespace where the
 * checkout (its node_modules too), the bench's temporary directory, /proc and /dev are mounted into
 * DIR at the same paths; the kernel drops those mounts when the process exits, Ctrl-C included.
 * chroot execs node, so the RSS is still read from the host's /proc/PID. A Debian 13 root with its
 * nodejs (and ca-certificates, which it recommends and loads at start), made once:
 *   mmdebstrap --variant=minbase --include=nodejs,ca-certificates trixie \
 *     /var/tmp/telematics-agent-roots/trixie-amd64-nodejs http://deb.debian.org/debian
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PlatformSimulator } from '../src/sim/index.js';
import { driveText, generateDrive } from '../src/sim/receiver/index.js';
import { makeThrowawayCa } from '../src/sim/throwaway-ca.js';
import { requestSnapshot } from '../src/status/status-client.js';
import { numberArg } from './args.js';
import { footprintMajors } from './footprint-majors.js';
import { memoryProbeArgs, runSpell } from './held-spell.js';

const QUICK = process.argv.includes('--quick');
const SECONDS = numberArg('seconds', Number(process.env.FOOTPRINT_SECONDS ?? 0)) || numberArg('minutes', QUICK ? 1 : 5) * 60;
const MINUTES = SECONDS / 60;
const SAMPLE_S = SECONDS % 60 === 0 ? 60 : 10;
const TLS = process.argv.includes('--tls');
const HELD = process.argv.includes('--held');
const HELD_SPEED = numberArg('speed', 20);
/** `--held --drive-minutes N`: the read-only spell of held-spell.ts, N minutes of drive. */
const DRIVE_MINUTES = numberArg('drive-minutes', 0);
const SPELL = HELD && DRIVE_MINUTES > 0;
const DRAIN = SPELL && process.argv.includes('--drain');
if (DRIVE_MINUTES > 0 && !HELD) throw new Error('--drive-minutes is a read-only spell: give --held with it');
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const CLI = stringArg('cli') ?? path.join(REPO, 'dist/cli/main.js');
const say = (s: string) => process.stdout.write(`${s}\n`);
const MB = 1e6;

function stringArg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const ROOT = stringArg('root') === undefined ? undefined : path.resolve(stringArg('root')!);
const NODE_BIN = stringArg('node') ?? process.execPath;
if (ROOT !== undefined && stringArg('node') !== undefined) throw new Error('--node and --root each name the node: give one');
/** The program's directory (a checkout, or an unpacked package's /opt/telematics-agent): its node_modules serve the baseline. */
const APP = path.resolve(path.dirname(CLI), '../..');

/** `--root`: refuses (one sentence, what to do) unless root, DIR/usr/bin/node exists and is major 20; its version. */
function rootNodeVersion(root: string): string {
  try {
    return checkedRootNodeVersion(root);
  } catch (e) {
    process.stderr.write(`bench:footprint: ${(e as Error).message}\n`);
    process.exit(2);
  }
}

function checkedRootNodeVersion(root: string): string {
  if (process.getuid?.() !== 0) throw new Error('--root needs root (chroot and mounts): run the bench as root, e.g. with sudo');
  if (!existsSync(path.join(root, 'usr/bin/node')))
    throw new Error(
      `${root} has no /usr/bin/node: give --root a Debian 13 root made with nodejs (see this file's header for the mmdebstrap command)`,
    );
  const v = spawnSync('chroot', [root, '/usr/bin/node', '--version'], { encoding: 'utf8' });
  if (v.error) throw new Error(`chroot did not run (${v.error.message}): put coreutils' chroot on PATH`);
  const version = v.stdout.trim();
  if (v.status !== 0 || !version.startsWith('v20.'))
    throw new Error(
      `the node in ${root} is ${version || `not runnable (${v.stderr.trim()})`}, not major 20: give --root a Debian 13 root (nodejs 20.19) instead`,
    );
  return version;
}

/** A checkout's directories a chrooted node reads: the checkout and its node_modules when that is a link out of it. */
function checkoutDirs(checkout: string): string[] {
  const real = realpathSync(checkout);
  const modules = path.join(real, 'node_modules');
  const realModules = existsSync(modules) ? realpathSync(modules) : modules;
  return realModules.startsWith(`${real}/`) ? [real] : [real, realModules];
}

/**
 * The mount points spawnNode's `mkdir -p` makes in the root for these binds (absent now), children
 * before parents: removed after the run, and only these (the root's own directories stay).
 */
function mountPointsToMake(root: string, binds: string[]): string[] {
  const made = new Set<string>();
  for (const bind of binds)
    for (let d = bind; d !== '/' && !existsSync(path.join(root, d)); d = path.dirname(d)) made.add(path.join(root, d));
  return [...made].sort((a, b) => b.length - a.length);
}

/**
 * `node ARGS` in cwd: on this host's node, or with `--root` in a private mount namespace (unshare),
 * the directories bound into the root at their own paths, then chroot; every step execs the next, so
 * the PID is node's.
 */
function spawnNode(
  args: string[],
  opts: { env: Record<string, string>; cwd?: string; binds: string[]; stdio: 'ignore' | ['ignore', number, number] },
): ChildProcess {
  if (ROOT === undefined) return spawn(NODE_BIN, args, { env: opts.env, cwd: opts.cwd, stdio: opts.stdio });
  const inside =
    'set -e; R=$1; n=$2; shift 2; mount -t proc proc "$R/proc"; mount --rbind /dev "$R/dev"; ' +
    'while [ "$n" -gt 0 ]; do mkdir -p "$R$1"; mount --rbind "$1" "$R$1"; shift; n=$((n - 1)); done; ' +
    // coreutils' chroot changes to /; the root's own sh changes to cwd, then execs node.
    `exec chroot "$R" /bin/sh -c 'cd "$0" && exec /usr/bin/node "$@"' "$@"`;
  const binds = [...new Set(opts.binds)];
  return spawn(
    'unshare',
    ['--mount', '--propagation', 'private', '/bin/sh', '-c', inside, 'sh', ROOT, String(binds.length), ...binds, opts.cwd ?? '/', ...args],
    {
      env: opts.env,
      stdio: opts.stdio,
    },
  );
}

/** With `--root`, that PID is the root's node (chroot execed it), not a shell or chroot left between. */
function checkRootNode(pid: number): void {
  if (ROOT === undefined) return;
  const exe = readlinkSync(`/proc/${pid}/exe`);
  // The kernel names the file it ran: a root whose /usr/bin/node is a link shows the link's target.
  if (exe !== realpathSync(path.join(ROOT, 'usr/bin/node')))
    throw new Error(`PID ${pid} runs ${exe}, not the root's node: its RSS would not be node's`);
}

const UNIT = readFileSync(path.join(REPO, 'systemd/telematics-agent.service'), 'utf8');

/** node's flags in the unit's ExecStart (V8 flags NODE_OPTIONS refuses); `--node-args` replaces them. */
function unitNodeArgs(): string[] {
  const args = stringArg('node-args') ?? /^ExecStart=\S+ (.*?) ?\S+\/dist\/cli\/main\.js /m.exec(UNIT)?.[1] ?? '';
  return args.split(' ').filter((a) => a !== '');
}

/** The unit's Environment= lines (NODE_ENV, NODE_OPTIONS, ...), as systemd gives them to the daemon. */
function unitEnvironment(): Record<string, string> {
  const unit = UNIT;
  const env: Record<string, string> = {};
  for (const m of unit.matchAll(/^Environment=(?:"([^"]*)"|(\S+))\s*$/gm)) {
    const kv = m[1] ?? m[2] ?? '';
    const eq = kv.indexOf('=');
    env[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  const override = stringArg('node-options');
  if (override !== undefined) env.NODE_OPTIONS = override;
  process.argv.forEach((a, i) => {
    const kv = a === '--env' ? process.argv[i + 1] : undefined;
    if (kv?.includes('=')) env[kv.slice(0, kv.indexOf('='))] = kv.slice(kv.indexOf('=') + 1);
  });
  return env;
}

function procStatus(pid: number, key: 'VmRSS' | 'VmHWM' | 'RssAnon' | 'RssFile' | 'Threads'): number {
  const m = new RegExp(`${key}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * (key === 'Threads' ? 1 : 1024) : Number.NaN;
}

function writeBytes(pid: number): number {
  const m = /write_bytes:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'));
  return m ? Number(m[1]) : Number.NaN;
}

function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, USER_HZ 100
}

/** Fixes the daemon holds in memory (the status snapshot's disk.heldInMemory). */
async function heldFixes(socket: string): Promise<string> {
  return requestSnapshot(socket, 2000).then(
    (s) => String(s.disk.heldInMemory ?? 0),
    (e: Error) => `? (${e.message})`,
  );
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fmt = (n: number, d = 1) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const mb = (bytes: number) => `${fmt(bytes / MB)} MB`;

function exited(child: ChildProcess): Promise<void> {
  return new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.once('exit', () => r())));
}

async function main(): Promise<void> {
  const nodeVersion =
    ROOT !== undefined
      ? `${rootNodeVersion(ROOT)} (chroot ${ROOT})`
      : NODE_BIN === process.execPath
        ? process.version
        : `${spawnSync(NODE_BIN, ['--version'], { encoding: 'utf8' }).stdout.trim()} (${NODE_BIN})`;
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'ta-bench-footprint-')));
  const binds = [...checkoutDirs(REPO), ...checkoutDirs(APP), dir];
  const mountPoints = ROOT === undefined ? [] : mountPointsToMake(ROOT, binds);
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, TMPDIR: dir, ...unitEnvironment() };
  const sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'pw' }] });
  const ca = TLS ? makeThrowawayCa(mkdtempSync(path.join(dir, 'ca-'))) : undefined;
  const urls = await sim.start(ca ? { tls: { key: ca.key, cert: ca.cert, protocols: 'h2' }, idleTimeoutMs: 60_000 } : {});
  const children: ChildProcess[] = [];
  let unmount = (): unknown => undefined;
  const removeDirs = () => {
    rmSync(dir, { recursive: true, force: true });
    // The mount points made in the root (the mounts went with the processes): rmdir, never a
    // directory something else filled.
    for (const d of mountPoints) {
      try {
        rmdirSync(d);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') console.error(`left ${d} in the root: ${(e as Error).message}`);
      }
    }
  };
  // Ctrl-C, or the bench alone killed: no process left behind (with --root, its mounts go with it).
  const interrupted = (signal: NodeJS.Signals) => {
    for (const c of children) c.kill('SIGKILL');
    unmount();
    removeDirs();
    process.kill(process.pid, signal);
  };
  process.once('SIGINT', interrupted).once('SIGTERM', interrupted);
  let back: PlatformSimulator | undefined;
  try {
    const replay = path.join(dir, 'drive.nmea');
    writeFileSync(
      replay,
      driveText(generateDrive({ minutes: SPELL ? DRIVE_MINUTES + 1 : (MINUTES + 2) * (HELD ? HELD_SPEED : 1), hz: 10 })),
    );
    writeFileSync(path.join(dir, 'password'), 'pw\n', { mode: 0o600 });
    const socket = path.join(dir, 'status.sock');
    const configFile = path.join(dir, 'config.json');
    const config = {
      environment: 'staging',
      platform: { authUrl: urls.authUrl, deviceUrl: urls.deviceUrl, planningUrl: urls.planningUrl, ...(ca ? { caFile: ca.caFile } : {}) },
      credentials: { username: 'agent', passwordFile: path.join(dir, 'password') },
      device: { externalSystemId: 'bench-fleet', externalDeviceId: 'bench-gw', carrierCode: 'SIM' },
      gnss: { replayFile: replay, replaySpeed: HELD ? HELD_SPEED : 1 },
      ...(HELD ? { recording: { mode: 'all' } } : {}),
      dataDir: path.join(dir, 'data'),
      status: { socketPath: socket },
    };
    writeFileSync(configFile, JSON.stringify(config), { mode: 0o600 });

    if (HELD) {
      const data = path.join(dir, 'data');
      mkdirSync(data);
      const mount = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,ro', 'tmpfs', data], { stdio: 'inherit' });
      if (mount.status !== 0) throw new Error('--held needs root: it mounts a read-only tmpfs as the data directory');
      unmount = () => spawnSync('umount', ['-l', data]);
      // The lock a daemon on a read-only card takes (system/daemon-locks.ts), not /run's.
      env.TELEMATICS_AGENT_RUN_DIR = path.join(dir, 'run');
      mkdirSync(env.TELEMATICS_AGENT_RUN_DIR);
      await sim.stop();
    }

    // The baselines first, so that their start does not share the CPU with the daemon's.
    const idle = 'setInterval(() => {}, 1 << 30);';
    // undici's dispatcher files, as platform/transport/dispatcher.ts imports them: its index (fetch,
    // WebSocket, mocks, caches) is 10 MB more RSS that the daemon never loads.
    // From the program's own node_modules; a package's better-sqlite3 carries a build per ABI
    // (build/node<major>-abi<abi>/), taken as the daemon takes it (system/sqlite-binding.ts).
    const libs =
      "import Database from 'better-sqlite3'; import Pool from 'undici/lib/dispatcher/pool.js';" +
      " import { existsSync } from 'node:fs'; import { createRequire } from 'node:module';" +
      " const mod = createRequire(process.cwd() + '/').resolve('better-sqlite3/package.json').slice(0, -'package.json'.length);" +
      " const carried = `${mod}build/node${process.versions.node.split('.')[0]}-abi${process.versions.modules}/better_sqlite3.node`;" +
      ` const db = new Database(${JSON.stringify(path.join(dir, 'libs.db'))}, existsSync(carried) ? { nativeBinding: carried } : {});` +
      " db.pragma('journal_mode = WAL');" +
      " const pool = new Pool('http://127.0.0.1:9'); " +
      idle;
    const nodeArgs = unitNodeArgs();
    const bare = spawnNode([...nodeArgs, '-e', idle], { env, binds, stdio: 'ignore' });
    const withLibs = spawnNode([...nodeArgs, '--input-type=module', '-e', libs], { env, cwd: APP, binds, stdio: 'ignore' });
    children.push(bare, withLibs);
    await sleep(3000);

    const logFile = path.join(dir, 'daemon.log');
    const log = openSync(logFile, 'a');
    const t0 = performance.now();
    const probeArgs = SPELL ? memoryProbeArgs(dir) : [];
    const daemon = spawnNode([...nodeArgs, ...probeArgs, CLI, 'run', '--config', configFile], { env, binds, stdio: ['ignore', log, log] });
    children.push(daemon);
    const pid = daemon.pid!;
    let readyMs = Number.NaN;
    for (;;) {
      if (daemon.exitCode !== null)
        throw new Error(`the daemon exited with ${daemon.exitCode}:\n${readFileSync(path.join(dir, 'daemon.log'), 'utf8')}`);
      const ok = await requestSnapshot(socket, 500).then(
        () => true,
        () => false,
      );
      if (ok) {
        readyMs = performance.now() - t0;
        break;
      }
      if (performance.now() - t0 > 60_000) throw new Error('the status socket did not answer within 60 s');
      await sleep(25);
    }
    checkRootNode(pid);
    const rssReady = procStatus(pid, 'VmRSS');
    const peakReady = procStatus(pid, 'VmHWM');
    const write0 = writeBytes(pid);
    const cpu0 = cpuSeconds(pid);
    const tReady = performance.now();
    say(
      `footprint: ${SPELL ? `a ${DRIVE_MINUTES}-minute drive` : `${fmt(MINUTES, 2)} min`} at ${HELD ? `${HELD_SPEED * 10} Hz, fixes held (read-only card, platform down)` : '10 Hz'}, ${TLS ? 'TLS h2' : 'plain HTTP'}, NODE_OPTIONS=${env.NODE_OPTIONS ?? ''}, node ${nodeVersion}`,
    );
    const extra = Object.entries(env).filter(([k]) => !['PATH', 'HOME', 'TMPDIR', 'NODE_OPTIONS'].includes(k));
    say(`  environment: ${extra.map(([k, v]) => `${k}=${v}`).join(' ')}; node arguments: ${nodeArgs.join(' ') || 'none'}`);
    say(`  start: status socket answered ${fmt(readyMs, 0)} ms after spawn; RSS then ${mb(rssReady)} (peak so far ${mb(peakReady)})`);

    let firstDelivery = '';
    if (SPELL)
      await runSpell({
        pid,
        dir,
        socket,
        logFile,
        driveMinutes: DRIVE_MINUTES,
        everyMinutes: numberArg('every', 30),
        speed: HELD_SPEED,
        procStatus,
        say,
        ...(DRAIN
          ? {
              platformBack: async () => {
                // The platform back where the daemon knows it: a fresh simulator on the same port.
                back = new PlatformSimulator({ users: [{ username: 'agent', password: 'pw' }] });
                await back.start({ port: urls.port });
              },
            }
          : {}),
      });
    for (let t = SAMPLE_S; !SPELL && t <= SECONDS; t += SAMPLE_S) {
      while (performance.now() < tReady + t * 1000) {
        await sleep(Math.min(250, tReady + t * 1000 - performance.now()));
        if (firstDelivery === '' && sim.events.size > 0)
          firstDelivery = `first event delivered ${fmt((performance.now() - tReady) / 1000)} s after ready: RSS ${mb(procStatus(pid, 'VmRSS'))}, peak ${mb(procStatus(pid, 'VmHWM'))}`;
      }
      if (firstDelivery !== '' && !firstDelivery.startsWith('said')) {
        say(`  ${firstDelivery}`);
        firstDelivery = 'said';
      }
      const at = SAMPLE_S === 60 ? `${t / 60} min` : `${t} s`;
      say(
        `  ${at}: RSS ${mb(procStatus(pid, 'VmRSS'))} (anon ${mb(procStatus(pid, 'RssAnon'))}, file ${mb(procStatus(pid, 'RssFile'))}), peak ${mb(procStatus(pid, 'VmHWM'))}, ${procStatus(pid, 'Threads')} threads, ${HELD ? `${await heldFixes(socket)} fixes held` : `${sim.events.size} events delivered`}`,
      );
    }
    const seconds = (performance.now() - tReady) / 1000;
    const rssEnd = procStatus(pid, 'VmRSS');
    const endParts = `anon ${mb(procStatus(pid, 'RssAnon'))}, file ${mb(procStatus(pid, 'RssFile'))}, ${procStatus(pid, 'Threads')} threads`;
    const peak = procStatus(pid, 'VmHWM');
    const writesPerHour = ((writeBytes(pid) - write0) / seconds) * 3600;
    const cpuShare = (cpuSeconds(pid) - cpu0) / seconds;
    checkRootNode(bare.pid!);
    checkRootNode(withLibs.pid!);
    const bareRss = procStatus(bare.pid!, 'VmRSS');
    const libsRss = procStatus(withLibs.pid!, 'VmRSS');
    const parts = (p: number) => `anon ${mb(procStatus(p, 'RssAnon'))}, file ${mb(procStatus(p, 'RssFile'))}`;
    const baseParts = `bare node: ${parts(bare.pid!)}; with the libraries: ${parts(withLibs.pid!)}`;
    daemon.kill('SIGTERM');
    await exited(daemon);

    say('');
    // The goals are the daemon's own cost, whatever the node's: at most 10 MB above a node with the
    // libraries loaded, the peak at most 5 MB above the steady figure.
    say(
      `  daemon after ${SPELL ? `the ${DRIVE_MINUTES}-minute drive${DRAIN ? ' and the drain' : ''}` : `${fmt(MINUTES, 2)} min`}  ${mb(rssEnd)}  (+${mb(rssEnd - libsRss)} above node with the libraries: goal <= +10 MB)`,
    );
    say(`  daemon peak          ${mb(peak)}  (start included; +${mb(peak - rssEnd)} above the end: goal <= +5 MB)`);
    say(`  daemon at the end    ${endParts}`);
    say(`  baselines            ${baseParts}`);
    say(`  bare node            ${mb(bareRss)}  (daemon ${fmt(rssEnd / bareRss, 2)}x, +${mb(rssEnd - bareRss)})`);
    say(`  node + better-sqlite3 + undici  ${mb(libsRss)}  (daemon ${fmt(rssEnd / libsRss, 2)}x, +${mb(rssEnd - libsRss)})`);
    say(`  start                ${fmt(readyMs, 0)} ms spawn -> status socket`);
    // A spell replays faster than real time, and its card takes no writes: what it writes is its log (--trace-gc).
    if (!SPELL) say(`  storage writes       ${fmt(writesPerHour / MB, 2)} MB per driving hour (process write_bytes, before the journal)`);
    say(`  CPU                  ${fmt(cpuShare * 100, 2)} % of a core; ${(back ?? sim).events.size} events delivered`);
    // One line for footprint-majors.ts to gather.
    say(
      `FOOTPRINT_RESULT ${JSON.stringify({ node: nodeVersion.split(' ')[0], rss: rssEnd, peak, bare: bareRss, libs: libsRss, startMs: readyMs, writesPerHour, cpu: cpuShare, events: (back ?? sim).events.size })}`,
    );
  } finally {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await Promise.all(children.map(exited));
    unmount();
    if (!HELD) await sim.stop();
    await back?.stop();
    removeDirs();
  }
}

if (process.argv.includes('--majors')) await footprintMajors(REPO, fileURLToPath(import.meta.url));
else await main();
