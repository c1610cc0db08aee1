import { spawn, spawnSync, type ChildProcess, type StdioOptions } from 'node:child_process';
import { existsSync, realpathSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { onTestFinished } from 'vitest';
import { PlatformSimulator, type PlatformSimulatorOptions, type SimUrls } from '../../src/sim/index.js';
import { driveText, generateDrive } from '../../src/sim/receiver/index.js';
import type { SimStartOptions } from '../../src/sim/server.js';
import { requestSnapshot } from '../../src/status/status-client.js';
import { formatUuid } from '../../src/store/event-id.js';
import { tempDir } from '../helpers/tmp.js';
import { waitFor } from '../helpers/wait.js';
import { CLI, REPO_ROOT } from '../helpers/paths.js';
import { cliEnv, spawnCli } from '../helpers/run-cli.js';
import type { AgentTuning } from '../../src/agent-options.js';

const TUNED_DAEMON = path.join(REPO_ROOT, 'test', 'e2e', 'fixtures', 'tuned-daemon.mjs');

export const HAVE_SOCAT = spawnSync('sh', ['-c', 'command -v socat']).status === 0;
export const DEVICE = { externalSystemId: 'e2e-fleet', externalDeviceId: 'e2e-gw-1', carrierCode: 'SIM', licensePlate: 'E2E-01' };

export interface DaemonConfig {
  dir: string;
  urls: Pick<SimUrls, 'authUrl' | 'deviceUrl' | 'planningUrl'>;
  gnss: Record<string, unknown>;
  upload?: Record<string, unknown>;
  storage?: Record<string, unknown>;
  /** Overrides of the platform section. */
  platform?: Record<string, unknown>;
  /** Overrides of the retry waits (AgentOptions.tuning; default E2E_TUNING). */
  tuning?: AgentTuning;
  /** Content of the password file (default pw). */
  password?: string;
  /**
   * The motion section. Default off: these tests count fixes (recorded, pending, delivered), and a
   * drive with a stop of 60 s would add its movement events to the outbox; test/e2e/trips.test.ts turns it on.
   */
  motion?: Record<string, unknown>;
  /** The recording section (default every fix: `{ mode: 'all' }`). */
  recording?: Record<string, unknown>;
  /** The ignition section (absent: none, no engine events); test/e2e/engine-events.test.ts sets a value file. */
  ignition?: Record<string, unknown>;
}

/**
 * The retry waits of the tests' daemons: seconds where the daemon's constants are minutes, so that a
 * test sees a recovery without waiting out a production backoff (fixtures/tuned-daemon.mjs).
 */
export const E2E_TUNING = {
  upload: { minBackoffMs: 100, maxBackoffMs: 1000 },
  platform: { registrationRetryMinS: 1, registrationRetryMaxS: 10, tokenServiceRetryMinS: 1, tokenServiceRetryMaxS: 2 },
} satisfies AgentTuning;

/** The daemon's tuning file beside its configuration (startDaemon passes it on). */
const tuningFileOf = (configFile: string): string => path.join(path.dirname(configFile), 'tuning.json');

/**
 * The daemon's config file: the simulator's loopback addresses, every fix recorded, no start-up
 * spread, backlog unpaced; and beside it the short retry waits (E2E_TUNING, with `c.tuning` over it).
 */
export function writeConfig(c: DaemonConfig): string {
  const passwordFile = path.join(c.dir, 'password');
  writeFileSync(passwordFile, `${c.password ?? 'pw'}\n`, { mode: 0o600 });
  const config = {
    environment: 'staging',
    platform: {
      authUrl: c.urls.authUrl,
      deviceUrl: c.urls.deviceUrl,
      planningUrl: c.urls.planningUrl,
      requestTimeoutMs: 5000,
      startupJitterS: 0,
      ...c.platform,
    },
    credentials: { username: 'agent', passwordFile },
    device: DEVICE,
    gnss: c.gnss,
    recording: c.recording ?? { mode: 'all' },
    upload: { ...c.upload },
    storage: { commitIntervalMs: 200, ...c.storage },
    motion: c.motion ?? { enabled: false },
    ...(c.ignition ? { ignition: c.ignition } : {}),
    dataDir: path.join(c.dir, 'data'),
    log: { level: 'info' },
    status: { socketPath: path.join(c.dir, 'status.sock') },
  };
  const file = path.join(c.dir, 'config.json');
  writeFileSync(file, JSON.stringify(config, null, 2), { mode: 0o600 });
  const tuning: AgentTuning = {
    upload: { ...E2E_TUNING.upload, ...c.tuning?.upload },
    platform: { ...E2E_TUNING.platform, ...c.tuning?.platform },
  };
  writeFileSync(tuningFileOf(file), JSON.stringify(tuning, null, 2));
  return file;
}

export interface Daemon {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  log(): string;
}

const UNIT = readFileSync(path.join(REPO_ROOT, 'systemd', 'telematics-agent.service'), 'utf8');

/** The NODE_OPTIONS the systemd unit gives the daemon: tests run it as it runs on a gateway. */
export const UNIT_NODE_OPTIONS = /^Environment=NODE_OPTIONS=(.+)$/m.exec(UNIT)?.[1];

/** node's flags in the unit's ExecStart (V8 flags NODE_OPTIONS refuses), given to the daemon too. */
export const UNIT_NODE_ARGS = (/^ExecStart=\S+ (.*?) ?\S+\/dist\/cli\/main\.js /m.exec(UNIT)?.[1] ?? '').split(' ').filter((a) => a !== '');

/**
 * `telematics-agent run --config <configFile>`; with the tuning file writeConfig leaves beside it,
 * through fixtures/tuned-daemon.mjs (the same daemon, its retry waits shortened).
 */
export function startDaemon(dir: string, configFile: string, env: NodeJS.ProcessEnv = {}, nodeArgs: string[] = []): Daemon {
  const logFile = path.join(dir, `daemon-${Date.now()}-${Math.random().toString(36).slice(2)}.log`);
  const fd = openSync(logFile, 'a');
  const tuningFile = tuningFileOf(configFile);
  const options = {
    stdio: ['ignore', fd, fd] as StdioOptions,
    env: { ...(UNIT_NODE_OPTIONS ? { NODE_OPTIONS: UNIT_NODE_OPTIONS } : {}), ...env },
  };
  const child = existsSync(tuningFile)
    ? spawn(process.execPath, [...UNIT_NODE_ARGS, ...nodeArgs, TUNED_DAEMON, configFile, tuningFile], {
        ...options,
        cwd: REPO_ROOT,
        env: cliEnv(options.env),
      })
    : spawnCli(['run', '--config', configFile], { ...options, nodeArgs: [...UNIT_NODE_ARGS, ...nodeArgs] });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, exited, log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '') };
}

/**
 * When the current test finishes, a daemon still running gets `signal` and is awaited (SIGTERM: a
 * clean stop; SIGKILL where the test may have left it stuck).
 */
export function stopWhenFinished(daemon: Daemon, signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): void {
  onTestFinished(async () => {
    if (daemon.child.exitCode === null && daemon.child.signalCode === null) {
      daemon.child.kill(signal);
      await daemon.exited;
    }
  });
}

/** Resolves once the daemon answers on its status socket; fails at once if it exited. */
export async function untilStatusSocket(daemon: Daemon, socket: string): Promise<void> {
  await waitFor(
    'status socket',
    async () => {
      if (daemon.child.exitCode !== null) throw new Error(`the daemon exited with ${daemon.child.exitCode}:\n${daemon.log()}`);
      // 2 s a look: a socket nobody listens on fails at once anyway, and a daemon that answers
      // every look in more than half a second (a full-speed replay on a loaded machine) is up.
      return requestSnapshot(socket, 2000).then(
        () => true,
        () => false,
      );
    },
    { timeoutMs: 60_000, detail: daemon.log },
  );
}

export interface ReplayDaemonOptions {
  /** The temporary folder's prefix. */
  prefix?: string;
  /** The simulator's options; default one user agent / pw. */
  sim?: PlatformSimulatorOptions;
  /** How the simulator listens (TLS, idle timeout). */
  simStart?: SimStartOptions;
  /** The drive the receiver replays from a file (generateDrive's options). */
  drive: Parameters<typeof generateDrive>[0];
  /** gnss.replaySpeed: 1 live, 0 as fast as possible. */
  replaySpeed: number;
  /** Sections of the configuration beside the simulator's addresses and the replay. */
  config?: Omit<DaemonConfig, 'dir' | 'urls' | 'gnss'>;
  /** Before the daemon starts (faults on the simulator, say). */
  beforeStart?: (sim: PlatformSimulator) => void;
  /** Wait until the daemon answers on its status socket (default true). */
  ready?: boolean;
  /** How a daemon still running is stopped when the test finishes (default SIGTERM). */
  stopSignal?: 'SIGTERM' | 'SIGKILL';
  /** The daemon's environment beside the unit's NODE_OPTIONS, and node flags after the unit's. */
  env?: NodeJS.ProcessEnv;
  nodeArgs?: string[];
}

export interface ReplayDaemon {
  dir: string;
  sim: PlatformSimulator;
  urls: SimUrls;
  /** The daemon's configuration file (a CLI run with it shares the daemon's database and socket). */
  configFile: string;
  /** The daemon's status socket. */
  socket: string;
  daemon: Daemon;
}

/**
 * The platform simulator in-process and the real daemon (`run`) replaying a generated drive from a
 * file, both stopped and the folder removed when the current test finishes (call it inside a test).
 */
export async function startReplayDaemon(o: ReplayDaemonOptions): Promise<ReplayDaemon> {
  const dir = tempDir(o.prefix ?? 'ta-e2e-');
  const sim = new PlatformSimulator(o.sim ?? { users: [{ username: 'agent', password: 'pw' }] });
  const urls = await sim.start(o.simStart);
  onTestFinished(() => sim.stop());
  const replayFile = path.join(dir, 'drive.nmea');
  writeFileSync(replayFile, driveText(generateDrive(o.drive)));
  const configFile = writeConfig({ ...o.config, dir, urls, gnss: { replayFile, replaySpeed: o.replaySpeed } });
  o.beforeStart?.(sim);
  const daemon = startDaemon(dir, configFile, o.env, o.nodeArgs);
  stopWhenFinished(daemon, o.stopSignal);
  const socket = path.join(dir, 'status.sock');
  if (o.ready !== false) await untilStatusSocket(daemon, socket);
  return { dir, sim, urls, configFile, socket, daemon };
}

/** Committed outbox rows of fixes (event id, fix time), read as another process would after a crash. */
export function committedOutbox(dir: string): { id: string; time: number }[] {
  const file = path.join(dir, 'data', 'agent.db');
  if (!existsSync(file)) return [];
  const db = new BetterSqlite3(file);
  try {
    // Location updates only (kind bits 7..9 of flags zero): movement events arrive in sim.vehicleEvents, not sim.events.
    return (
      db.prepare('SELECT event_id, fix_time FROM outbox WHERE (flags >> 7) & 7 = 0').all() as { event_id: Buffer; fix_time: number }[]
    ).map((r) => ({
      id: formatUuid(r.event_id),
      time: r.fix_time,
    }));
  } finally {
    db.close();
  }
}

/** A pseudo-terminal pair (socat): the test writes NMEA into `input`, the daemon opens `device`. */
export async function ptyPair(dir: string): Promise<{ input: string; device: string; stop(): void }> {
  const input = path.join(dir, 'gps-in');
  const device = path.join(dir, 'gps-dev');
  const child = spawn('socat', [`pty,raw,echo=0,link=${input}`, `pty,raw,echo=0,link=${device}`], { stdio: 'ignore' });
  await waitFor('socat ptys', () => existsSync(input) && existsSync(device), { timeoutMs: 10_000 });
  // The configuration takes device paths under /dev only (gnss.path): the pty itself, not the link.
  return { input, device: realpathSync(device), stop: () => child.kill() };
}

export type PtyPair = Awaited<ReturnType<typeof ptyPair>>;

export interface PtyDaemon {
  dir: string;
  sim: PlatformSimulator;
  urls: SimUrls;
  pty: PtyPair;
  daemon: Daemon;
  /** The daemon's configuration file (a CLI run with it shares the daemon's database and socket). */
  configFile: string;
  /** The daemon's status socket. */
  socket: string;
}

/**
 * The platform simulator in-process, a socat pty pair, and the real daemon (`run`) reading the pty's
 * device; resolves once the daemon answers on its status socket. Each part's stop is pushed onto
 * `cleanups`, which the caller runs newest first after each test.
 */
export async function startPtyDaemon(
  cleanups: (() => Promise<void> | void)[],
  upload: Record<string, unknown> = {},
  /** The daemon's gnss section; default the pty's device itself. Runs before the daemon starts (a gpsd on the pty, say). */
  gnss: (pty: PtyPair) => Record<string, unknown> = (pty) => ({ path: pty.device, baudRate: 115200 }),
  /** simPort: the simulator's port, for a test that stops it and starts it again there (freePort in helpers/ports.ts). */
  options: { simPort?: number } = {},
): Promise<PtyDaemon> {
  // Removed last, after the daemon has stopped (tempDir's afterEach, registered while a test runs, was never run).
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ta-e2e-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'pw' }] });
  const urls = await sim.start(options.simPort !== undefined ? { port: options.simPort } : {});
  cleanups.push(() => sim.stop());
  const pty = await ptyPair(dir);
  cleanups.push(() => pty.stop());
  const configFile = writeConfig({ dir, urls, gnss: gnss(pty), upload: { concurrency: 1, ...upload } });
  const daemon = startDaemon(dir, configFile);
  cleanups.push(async () => {
    if (daemon.child.exitCode === null && daemon.child.signalCode === null) {
      daemon.child.kill('SIGKILL');
      await daemon.exited;
    }
  });
  const socket = `${dir}/status.sock`;
  await untilStatusSocket(daemon, socket);
  return { dir, sim, urls, pty, daemon, configFile, socket };
}

/** Event ids by fix time as the simulator received them (creationDate is the fix time). */
export function receivedByTime(events: ReadonlyMap<string, { event: Record<string, unknown> }>): Map<number, Set<string>> {
  const byTime = new Map<number, Set<string>>();
  for (const [id, e] of events) {
    const t = Date.parse(String(e.event.creationDate));
    const set = byTime.get(t) ?? new Set<string>();
    set.add(id);
    byTime.set(t, set);
  }
  return byTime;
}
