/**
 * npm run bench:footprint [-- --minutes 5 | --quick] [--tls]
 *
 * The daemon's footprint on a gateway: `run` started as the systemd unit starts it (the unit's
 * Environment= lines, NODE_OPTIONS included, read from systemd/telematics-agent.service), with the
 * default configuration (only the simulator's addresses, the account, the device and a replayed
 * 10 Hz drive in real time), against the platform simulator in this process (plain HTTP; `--tls`:
 * TLS with h2 and a throwaway CA, as a gateway talks to the platform). Printed, never asserted.
 *
 * Beside it, in the same run and with the same environment, the baselines: a bare `node` and a
 * `node` that has loaded the daemon's two large libraries (better-sqlite3 with a database open,
 * undici with a dispatcher), idle. Figures:
 * - RSS when the status socket first answers, the peak (VmHWM: start included), at each minute.
 * - Start: from spawn to the status socket answering (polled every 25 ms).
 * - Storage writes per driving hour: write_bytes of /proc/PID/io (what the process sends to the
 *   block layer, before the file system's journal) from ready to the end, scaled to an hour.
 * - CPU: utime + stime from ready to the end, as a share of one core.
 * Assumes the data directory on a disk (os.tmpdir(); tmpfs would count no writes) and an otherwise
 * quiet machine: on a loaded one the start time grows, the RSS barely.
 * `--node-options "..."` replaces the unit's NODE_OPTIONS (to weigh V8 flags); `--cli FILE` runs
 * another build's dist/cli/main.js.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PlatformSimulator } from '../src/sim/index.js';
import { driveText, generateDrive } from '../src/sim/receiver/index.js';
import { makeThrowawayCa } from '../src/sim/throwaway-ca.js';
import { requestSnapshot } from '../src/status/status-client.js';
import { numberArg } from './args.js';

const QUICK = process.argv.includes('--quick');
const MINUTES = numberArg('minutes', QUICK ? 1 : 5);
const TLS = process.argv.includes('--tls');
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const CLI = stringArg('cli') ?? path.join(REPO, 'dist/cli/main.js');
const say = (s: string) => process.stdout.write(`${s}\n`);
const MB = 1e6;

function stringArg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/** The unit's Environment= lines (NODE_ENV, NODE_OPTIONS, ...), as systemd gives them to the daemon. */
function unitEnvironment(): Record<string, string> {
  const unit = readFileSync(path.join(REPO, 'systemd/telematics-agent.service'), 'utf8');
  const env: Record<string, string> = {};
  for (const m of unit.matchAll(/^Environment=(?:"([^"]*)"|(\S+))\s*$/gm)) {
    const kv = m[1] ?? m[2] ?? '';
    const eq = kv.indexOf('=');
    env[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  const override = stringArg('node-options');
  if (override !== undefined) env.NODE_OPTIONS = override;
  return env;
}

function procStatus(pid: number, key: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`${key}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : Number.NaN;
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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fmt = (n: number, d = 1) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const mb = (bytes: number) => `${fmt(bytes / MB)} MB`;

function exited(child: ChildProcess): Promise<void> {
  return new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.once('exit', () => r())));
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ta-bench-footprint-'));
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, TMPDIR: dir, ...unitEnvironment() };
  const sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'pw' }] });
  const ca = TLS ? makeThrowawayCa(mkdtempSync(path.join(dir, 'ca-'))) : undefined;
  const urls = await sim.start(ca ? { tls: { key: ca.key, cert: ca.cert, protocols: 'h2' }, idleTimeoutMs: 60_000 } : {});
  const children: ChildProcess[] = [];
  try {
    const replay = path.join(dir, 'drive.nmea');
    writeFileSync(replay, driveText(generateDrive({ minutes: MINUTES + 2, hz: 10 })));
    writeFileSync(path.join(dir, 'password'), 'pw\n', { mode: 0o600 });
    const socket = path.join(dir, 'status.sock');
    const configFile = path.join(dir, 'config.json');
    const config = {
      environment: 'staging',
      platform: { authUrl: urls.authUrl, deviceUrl: urls.deviceUrl, planningUrl: urls.planningUrl, ...(ca ? { caFile: ca.caFile } : {}) },
      credentials: { username: 'agent', passwordFile: path.join(dir, 'password') },
      device: { externalSystemId: 'bench-fleet', externalDeviceId: 'bench-gw', carrierCode: 'SIM' },
      gnss: { replayFile: replay, replaySpeed: 1 },
      dataDir: path.join(dir, 'data'),
      status: { socketPath: socket },
    };
    writeFileSync(configFile, JSON.stringify(config), { mode: 0o600 });

    // The baselines first, so that their start does not share the CPU with the daemon's.
    const idle = 'setInterval(() => {}, 1 << 30);';
    const libs =
      "import Database from 'better-sqlite3'; import { Agent } from 'undici';" +
      ` const db = new Database(${JSON.stringify(path.join(dir, 'libs.db'))}); db.pragma('journal_mode = WAL');` +
      ' const agent = new Agent(); ' +
      idle;
    const bare = spawn(process.execPath, ['-e', idle], { env, stdio: 'ignore' });
    const withLibs = spawn(process.execPath, ['--input-type=module', '-e', libs], { env, cwd: REPO, stdio: 'ignore' });
    children.push(bare, withLibs);
    await sleep(3000);

    const log = openSync(path.join(dir, 'daemon.log'), 'a');
    const t0 = performance.now();
    const daemon = spawn(process.execPath, [CLI, 'run', '--config', configFile], { env, stdio: ['ignore', log, log] });
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
    const rssReady = procStatus(pid, 'VmRSS');
    const peakReady = procStatus(pid, 'VmHWM');
    const write0 = writeBytes(pid);
    const cpu0 = cpuSeconds(pid);
    const tReady = performance.now();
    say(
      `footprint: ${MINUTES} min at 10 Hz, ${TLS ? 'TLS h2' : 'plain HTTP'}, NODE_OPTIONS=${env.NODE_OPTIONS ?? ''}, node ${process.version}`,
    );
    say(`  start: status socket answered ${fmt(readyMs, 0)} ms after spawn; RSS then ${mb(rssReady)} (peak so far ${mb(peakReady)})`);

    const perMinute: number[] = [];
    for (let m = 1; m <= MINUTES; m++) {
      await sleep(tReady + m * 60_000 - performance.now());
      perMinute.push(procStatus(pid, 'VmRSS'));
      say(`  ${m} min: RSS ${mb(perMinute[m - 1]!)}, peak ${mb(procStatus(pid, 'VmHWM'))}, ${sim.events.size} events delivered`);
    }
    const seconds = (performance.now() - tReady) / 1000;
    const rssEnd = procStatus(pid, 'VmRSS');
    const peak = procStatus(pid, 'VmHWM');
    const writesPerHour = ((writeBytes(pid) - write0) / seconds) * 3600;
    const cpuShare = (cpuSeconds(pid) - cpu0) / seconds;
    const bareRss = procStatus(bare.pid!, 'VmRSS');
    const libsRss = procStatus(withLibs.pid!, 'VmRSS');
    daemon.kill('SIGTERM');
    await exited(daemon);

    say('');
    say(`  daemon after ${MINUTES} min  ${mb(rssEnd)}  (goal <= 60 MB: ${fmt(rssEnd / (60 * MB), 2)}x)`);
    say(`  daemon peak          ${mb(peak)}  (goal <= 70 MB, start included: ${fmt(peak / (70 * MB), 2)}x)`);
    say(`  bare node            ${mb(bareRss)}  (daemon ${fmt(rssEnd / bareRss, 2)}x, +${mb(rssEnd - bareRss)})`);
    say(`  node + better-sqlite3 + undici  ${mb(libsRss)}  (daemon ${fmt(rssEnd / libsRss, 2)}x, +${mb(rssEnd - libsRss)})`);
    say(`  start                ${fmt(readyMs, 0)} ms spawn -> status socket`);
    say(`  storage writes       ${fmt(writesPerHour / MB, 2)} MB per driving hour (process write_bytes, before the journal)`);
    say(`  CPU                  ${fmt(cpuShare * 100, 2)} % of a core; ${sim.events.size} events delivered`);
  } finally {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await Promise.all(children.map(exited));
    await sim.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
