/**
 * `telematics-agent status` against the REAL daemon: the platform simulator in this process, a
 * socat pty pair as the receiver's serial port, `telematics-agent run` as a child process, and the
 * built CLI's `status` / `status --json` as child processes. One daemon walks through the states a
 * technician meets: healthy, degraded (no fix; platform answering 503 with a growing backlog) and
 * down (after SIGTERM, read from the database).
 */
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PlatformSimulator } from '../../src/sim/index.js';
import { generateDrive } from '../../src/sim/receiver/index.js';
import { dateField, sentence, timeField } from '../../src/sim/receiver/nmea-format.js';
import { requestSnapshot } from '../../src/status/status-client.js';
import { assessHealth, type Health } from '../../src/status/health.js';
import type { StatusSnapshot } from '../../src/status/snapshot.js';
import { committedOutbox, HAVE_SOCAT, ptyPair, startDaemon, writeConfig, type Daemon } from '../e2e/daemon.js';
import { waitFor } from '../helpers/wait.js';
import { runCli } from '../helpers/run-cli.js';

if (!HAVE_SOCAT) process.stderr.write('skipping status against the real daemon: socat is missing (apt-get install socat)\n');

/** Distinctive, so that its absence from the output means something. */
const PASSWORD = 'status-test-Pa55word-7c41';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

type Json = StatusSnapshot & { health: Health };

/** The CLI, with how long it took (status must answer quickly even while the daemon is busy). */
async function timedCli(args: string[]): Promise<Run> {
  const started = performance.now();
  const r = await runCli(args, { timeoutMs: 20_000 });
  return { code: r.code ?? 99, stdout: r.stdout, stderr: r.stderr, ms: performance.now() - started };
}

/**
 * The receiver, in real time: one epoch a second whose GNSS time is the host's time (so "fix time vs
 * system time" is honest), either a 3D fix from the synthetic drive, a no-fix epoch (RMC status V,
 * GGA quality 0, GSA mode 1, as a receiver in a tunnel sends), or nothing.
 */
class Receiver {
  mode: 'fix' | 'nofix' | 'off' = 'fix';
  readonly #fd: number;
  /** The drive's epochs by their time field (hhmmss.ss); ZDA opens every tenth one. */
  readonly #epochs = new Map<string, string>();
  #last = '';
  readonly #startMs: number;
  #timer: NodeJS.Timeout | undefined;

  constructor(input: string) {
    this.#fd = openSync(input, 'w');
    this.#startMs = Math.floor(Date.now() / 1000) * 1000;
    for (const line of generateDrive({ minutes: 10, hz: 1, startTimeMs: this.#startMs, seed: 3 }).lines) {
      const time = /^\$GN(?:ZDA|RMC),(\d{6}\.\d{2}),/.exec(line)?.[1];
      if (time !== undefined) this.#last = time;
      this.#epochs.set(this.#last, `${this.#epochs.get(this.#last) ?? ''}${line}\r\n`);
    }
  }

  start(): void {
    const tick = (): void => {
      const i = Math.round((Date.now() - this.#startMs) / 1000);
      if (this.mode === 'fix') writeSync(this.#fd, this.#epochAt(i));
      else if (this.mode === 'nofix') writeSync(this.#fd, noFixEpoch(this.#startMs + i * 1000));
    };
    tick();
    this.#timer = setInterval(tick, 1000);
  }

  /** The drive's epoch at second i (the drive lasts longer than this test). */
  #epochAt(i: number): string {
    return this.#epochs.get(timeField(this.#startMs + i * 1000)) ?? '';
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    closeSync(this.#fd);
  }
}

function noFixEpoch(timeMs: number): string {
  return [
    sentence(`GNRMC,${timeField(timeMs)},V,,,,,,,${dateField(timeMs)},,,N,V`),
    sentence(`GNGGA,${timeField(timeMs)},,,,,0,00,99.99,,,,,,`),
    sentence('GNGSA,A,1,,,,,,,,,,,,,99.99,99.99,99.99,1'),
    '',
  ].join('\r\n');
}

/** The token pair the daemon holds, read from its database as another process would. */
function storedTokens(dir: string): string[] {
  const db = new BetterSqlite3(path.join(dir, 'data', 'agent.db'), { readonly: true });
  try {
    const row = db.prepare('SELECT access_token, refresh_token, id_token FROM token_pair WHERE id = 1').get() as
      | Record<string, string | null>
      | undefined;
    return Object.values(row ?? {}).filter((v): v is string => typeof v === 'string' && v.length > 0);
  } finally {
    db.close();
  }
}

function expectNoSecrets(text: string, tokens: readonly string[]): void {
  expect(tokens.length).toBeGreaterThan(0);
  for (const t of tokens) {
    expect(text.includes(t), 'a token appears in the status output').toBe(false);
    // Even a fragment of one (the JWT signature part) must not leak.
    expect(text.includes(t.split('.').at(-1) ?? t)).toBe(false);
  }
  expect(text.includes(PASSWORD)).toBe(false);
}

function fitsTheScreen(text: string): void {
  const lines = text.trimEnd().split('\n');
  expect(lines.length).toBeLessThanOrEqual(24);
  // In a pipe a detail (an error, a note, a reason) goes out whole; the rows fit 80 columns.
  for (const l of lines) if (!/^( {10}|! )/.test(l)) expect(l.length, l).toBeLessThanOrEqual(80);
}

const timings: string[] = [];
async function status(label: string, args: string[] = []): Promise<{ human: Run; json: Run; j: Json }> {
  const human = await timedCli(['status', '--config', env.config, ...args]);
  const json = await timedCli(['status', '--json', '--config', env.config, ...args]);
  timings.push(
    `${label.padEnd(9)} status ${human.ms.toFixed(0).padStart(5)} ms (exit ${human.code})   status --json ${json.ms.toFixed(0).padStart(5)} ms (exit ${json.code})`,
  );
  expect(human.stderr).toBe('');
  expect(json.stderr).toBe('');
  return { human, json, j: JSON.parse(json.stdout) as Json };
}

const snap = (): Promise<StatusSnapshot | undefined> => requestSnapshot(env.socket, 1000).catch(() => undefined);

let env: { dir: string; config: string; socket: string; sim: PlatformSimulator; daemon: Daemon; receiver: Receiver; stopPty: () => void };

describe.skipIf(!HAVE_SOCAT)('status against the real daemon (simulator, pty, `run` as a child process)', () => {
  beforeAll(async () => {
    // Not tempDir(): that removes the directory after each test, and the daemon lives across them.
    // A short name: the status screen shows the device path in 34 columns, and TMPDIR is the run's folder.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ta-'));
    const sim = new PlatformSimulator({ users: [{ username: 'agent', password: PASSWORD }] });
    const urls = await sim.start();
    const pty = await ptyPair(dir);
    const config = writeConfig({ dir, urls, gnss: { path: pty.device, baudRate: 115200 }, upload: { concurrency: 1 } });
    writeFileSync(path.join(dir, 'password'), `${PASSWORD}\n`, { mode: 0o600 });
    const daemon = startDaemon(dir, config);
    const receiver = new Receiver(pty.input);
    env = { dir, config, socket: path.join(dir, 'status.sock'), sim, daemon, receiver, stopPty: () => pty.stop() };
    await waitFor(
      'status socket',
      async () => {
        if (daemon.child.exitCode !== null) throw new Error(`the daemon exited with ${daemon.child.exitCode}:\n${daemon.log()}`);
        return (await snap()) !== undefined;
      },
      { timeoutMs: 60_000, detail: daemon.log },
    );
    receiver.start();
  }, 90_000);

  afterAll(async () => {
    if (!env) return;
    env.receiver.stop();
    if (env.daemon.child.exitCode === null && env.daemon.child.signalCode === null) {
      env.daemon.child.kill('SIGKILL');
      await env.daemon.exited;
    }
    env.stopPty();
    await env.sim.stop();
    rmSync(env.dir, { recursive: true, force: true });
    process.stdout.write(`status call timings (2 shared cores, node start-up included):\n  ${timings.join('\n  ')}\n`);
  });

  it('healthy: 3D fix, registered, token valid, uploads succeeding: exit 0 with the facts, never a secret', async () => {
    const { sim, daemon } = env;
    let last: StatusSnapshot | undefined;
    await waitFor(
      'a healthy daemon',
      async () => {
        last = await snap();
        return last !== undefined && assessHealth(last).level === 'healthy' && (last.outbox.sentTotal ?? 0) > 3;
      },
      {
        timeoutMs: 60_000,
        detail: () => `${daemon.log()}\nlast snapshot: ${JSON.stringify(last)}\nhealth: ${last ? JSON.stringify(assessHealth(last)) : ''}`,
      },
    );
    const { human, json, j } = await status('healthy');
    expect(human.code, human.stdout).toBe(0);
    expect(json.code, json.stdout).toBe(0);
    const device = sim.devices[0]!;

    const lines = human.stdout.split('\n');
    expect(lines[0]).toMatch(/^telematics-agent \S+ · running, pid \d+, up .*HEALTHY$/);
    expect(human.stdout).toMatch(/^receiver\s+\/dev\/pts\/\d+\s+open\s+last sentence \d+\.\d s ago$/m);
    expect(human.stdout).toMatch(/^ {2}fix\s+3D\s+52\.\d{5} N 5\.\d{5} E\s+\d+ km\/h\s+HDOP \d+\.\d$/m);
    expect(human.stdout).toMatch(/^ {2}sats\s+used [1-9]\d*\s+GPS \d+\/\d+\s+GLO \d+\/\d+\s+GAL \d+\/\d+\s+BDS \d+\/\d+/m);
    expect(human.stdout).toMatch(/^ {2}time\s+\S+ \(GNSS\)/m);
    expect(human.stdout).toMatch(/^device\s+e2e-fleet \/ e2e-gw-1 \(config\)$/m);
    expect(human.stdout).toMatch(new RegExp(`^ {2}uuid\\s+${device.deviceUUID}$`, 'm'));
    expect(human.stdout).toMatch(/^token\s+valid, \d+ (s|min) old\s+password grants 1\s+refreshes 0$/m);
    expect(human.stdout).toMatch(/^outbox\s+pending \d+/m);
    expect(human.stdout).toMatch(/^upload\s+recorded \d+\s+sent today \d+\s+last success \d+ s ago$/m);
    expect(human.stdout).not.toMatch(/^!/m);
    fitsTheScreen(human.stdout);

    // The same facts for scripts; the daemon answered (source), so within the client's 1 s timeout.
    expect(j.source).toBe('daemon');
    expect(j.health).toEqual({ level: 'healthy', exitCode: 0, reasons: [] });
    expect(j.daemon).toMatchObject({ running: true, pid: daemon.child.pid });
    expect(j.receiver).toMatchObject({ link: 'open', mode: 3, port: expect.stringMatching(/^\/dev\/pts\/\d+$/) });
    expect(j.receiver!.satellitesUsed).toBeGreaterThan(3);
    expect(j.receiver!.lastSentenceAgeS).toBeLessThan(10);
    expect(Math.abs(j.receiver!.clockOffsetS!)).toBeLessThan(5);
    expect(j.receiver!.constellations.map((c) => c.constellation)).toEqual(['GPS', 'GLONASS', 'Galileo', 'BeiDou']);
    // Satellites marked used in the table add up to the fix's count (both from the same epoch's GSAs).
    expect(j.receiver!.constellations.reduce((n, c) => n + c.used, 0)).toBe(j.receiver!.satellitesUsed);
    expect(j.registration).toMatchObject({
      externalSystemId: 'e2e-fleet',
      externalDeviceId: 'e2e-gw-1',
      externalDeviceIdSource: 'config',
      deviceUUID: device.deviceUUID,
    });
    expect(j.token).toMatchObject({ state: 'valid', passwordGrants: sim.stats.passwordGrants, refreshes: 0 });
    expect(j.outbox.sentTotal).toBeGreaterThan(3);
    expect(j.outbox.recorded).toBeGreaterThanOrEqual(j.outbox.sentTotal!);
    expect(j.upload.lastSuccessAt).toBeGreaterThan(Date.now() - 60_000);
    expect(sim.events.size).toBeGreaterThanOrEqual(j.outbox.sentTotal!);

    const tokens = storedTokens(env.dir);
    expectNoSecrets(human.stdout, tokens);
    expectNoSecrets(json.stdout, tokens);
  }, 150_000);

  it('degraded: the receiver loses its fix: exit 1, "no fix" shown', async () => {
    env.receiver.mode = 'nofix';
    await waitFor('a no-fix epoch', async () => (await snap())?.receiver?.mode === 1, { timeoutMs: 30_000, detail: env.daemon.log });
    const { human, json, j } = await status('no fix');
    expect(human.code, human.stdout).toBe(1);
    expect(json.code).toBe(1);
    expect(human.stdout.split('\n')[0]).toMatch(/DEGRADED$/);
    expect(human.stdout).toMatch(/^ {2}fix\s+no fix$/m);
    expect(human.stdout).toMatch(/^! no fix$/m);
    expect(j.health).toMatchObject({ level: 'degraded', exitCode: 1, reasons: ['no fix'] });
    expect(j.receiver).toMatchObject({ link: 'open', mode: 1 });
    expect(j.receiver!.lastSentenceAgeS).toBeLessThan(10);
  }, 150_000);

  it('degraded: the platform answers 503, the backlog grows: exit 1, the upload error shown', async () => {
    const { sim } = env;
    env.receiver.mode = 'fix';
    await waitFor('the fix back', async () => (await snap())?.receiver?.mode === 3, { timeoutMs: 30_000, detail: env.daemon.log });
    sim.setFaults('events', { status503Rate: 1 });
    const before = (await snap())!.outbox.pending;
    let last: StatusSnapshot | undefined;
    await waitFor(
      'a growing backlog with a current upload error',
      async () => {
        last = await snap();
        return last !== undefined && last.outbox.pending >= before + 3 && assessHealth(last).level === 'degraded';
      },
      { timeoutMs: 60_000, detail: () => `${env.daemon.log()}\nlast snapshot: ${JSON.stringify(last)}` },
    );
    const { human, json, j } = await status('503');
    expect(human.code, human.stdout).toBe(1);
    expect(json.code).toBe(1);
    expect(human.stdout.split('\n')[0]).toMatch(/DEGRADED$/);
    // The upload error is the platform link failing: said once, with what failed and since when.
    expect(human.stdout).toMatch(
      /^! platform answers HTTP 503 for \d+ s \(since \d\d:\d\d:\d\d UTC\): PUT \/otm\/api\/v5\/events.*: HTTP 503/m,
    );
    expect(human.stdout).not.toMatch(/^! upload failing/m);
    expect(human.stdout).toMatch(/^ {10}last error \S+ \(transient\) \d+ s ago: event upload/m);
    expect(j.health.level).toBe('degraded');
    expect(j.health.reasons.some((r) => /^platform answers HTTP 503 for .*HTTP 503/.test(r))).toBe(true);
    // It answers, with an error: the screen says so, and when it last took a request.
    expect(human.stdout).toMatch(/^platform {2}last success \d+ (s|min) ago {2}answers HTTP 503 for \d+ (s|min)$/m);
    expect(j.platform?.failing?.message).toMatch(/HTTP 503/);
    expect(j.upload.lastError).toMatchObject({ class: 'transient', message: expect.stringContaining('503') });
    // The proxy page's title and heading say the same: its text once, without the status repeated.
    expect(j.upload.lastError?.message).toMatch(/: HTTP 503 \(Service Temporarily Unavailable\)$/);
    expect(j.outbox.pending).toBeGreaterThanOrEqual(before + 3);
    // Growing: a later look finds more waiting (the receiver keeps recording one fix a second).
    await waitFor('the backlog to grow further', async () => ((await snap())?.outbox.pending ?? 0) > j.outbox.pending, {
      timeoutMs: 30_000,
    });
    expect(sim.stats.faults.events).toBeGreaterThan(0);
    expectNoSecrets(human.stdout + json.stdout, storedTokens(env.dir));
  }, 150_000);

  it('down: after SIGTERM, says so first, reads the database (pending, registration, token), exit 2', async () => {
    const { daemon, sim } = env;
    env.receiver.mode = 'off';
    daemon.child.kill('SIGTERM');
    expect(await daemon.exited, daemon.log().slice(-2000)).toEqual({ code: 0, signal: null });
    const pending = committedOutbox(env.dir).length;
    expect(pending).toBeGreaterThan(0);

    const { human, json, j } = await status('down');
    expect(human.code, human.stdout).toBe(2);
    expect(json.code).toBe(2);
    const lines = human.stdout.split('\n');
    expect(lines[0]).toMatch(/^daemon not running/);
    expect(lines[1]).toMatch(/stopped\s+FAILING$/);
    expect(human.stdout).toMatch(new RegExp(`^outbox\\s+pending ${pending} \\(oldest \\d+ (s|min), host clock\\)`, 'm'));
    expect(human.stdout).toContain(sim.devices[0]!.deviceUUID);
    expect(human.stdout).toMatch(/^device\s+e2e-fleet \/ e2e-gw-1 \(config\)$/m);
    expect(human.stdout).toMatch(/^upload\s+sent today \d+\s+last success \d+ (s|min) ago \(host clock\)$/m);
    expect(human.stdout).toMatch(/^token\s+valid, \d+ (s|min) old\s+password grants 1/m);
    expect(human.stdout).toMatch(/^! daemon not running$/m);
    expect(human.stdout).not.toMatch(/^receiver/m);
    fitsTheScreen(human.stdout);

    expect(j.source).toBe('database');
    expect(j.daemon.running).toBe(false);
    expect(j.health.level).toBe('failing');
    expect(j.health.reasons[0]).toBe('daemon not running');
    expect(j.outbox.pending).toBe(pending);
    expect(j.outbox.sentTotal).toBe(sim.events.size);
    expect(j.registration.deviceUUID).toBe(sim.devices[0]!.deviceUUID);
    // What the uploader knew at its last stop: the platform's 503 came after the last success.
    expect(j.upload.lastSuccessAt).toBeGreaterThan(0);
    expect(j.upload.lastError).toMatchObject({ class: 'transient' });
    expect(j.upload.lastError!.at).toBeGreaterThan(j.upload.lastSuccessAt!);
    expect(j.disk.databaseBytes).toBeGreaterThan(0);
    expectNoSecrets(human.stdout + json.stdout, storedTokens(env.dir));
  }, 150_000);
});
