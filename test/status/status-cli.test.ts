import { execFile, spawn, spawnSync } from 'node:child_process';
import { connect } from 'node:net';
import { statSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { FixPublisher } from '../../src/socket/fix-publisher.js';
import { DaemonFixFeed } from '../../src/fix-feed/daemon-feed.js';
import { StatusServer } from '../../src/socket/server.js';
import type { StatusSnapshot } from '../../src/status/snapshot.js';
import { tempDir } from '../helpers/tmp.js';
import { MetaStore } from '../../src/store/meta.js';
import { openDatabase } from '../../src/store/database.js';
import { MOTION_META_KEY, type MotionRecord } from '../../src/motion/motion-record.js';
import { liveSnapshot, seedDatabase, writeConfig } from './fixtures.js';
import { waitFor } from '../helpers/wait.js';
import { cliEnv, runCli, spawnCli } from '../helpers/run-cli.js';
import { CLI } from '../helpers/paths.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function status(args: string[]): Promise<Run> {
  const r = await runCli(args, { timeoutMs: 20_000 });
  return { code: r.code ?? 99, stdout: r.stdout, stderr: r.stderr };
}

const servers: StatusServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
});

async function serve(dir: string, snapshot: () => StatusSnapshot, fixes?: FixPublisher): Promise<StatusServer> {
  const server = new StatusServer({
    socketPath: path.join(dir, 'status.sock'),
    provider: { snapshot },
    logger: silentLogger(),
    ...(fixes ? { fixes } : {}),
  });
  await server.start();
  servers.push(server);
  return server;
}

describe('status CLI', () => {
  it('down: says so first, shows what the database knows, exit 2, never a token', async () => {
    const dir = tempDir();
    const config = writeConfig(dir);
    seedDatabase(path.join(dir, 'data'), Date.now());
    const r = await status(['status', '--config', config]);
    expect(r.code).toBe(2);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^daemon not running/);
    expect(r.stdout).toMatch(/3f1c2a9e-0000-4000-8000-00000000beef/);
    expect(r.stdout).toMatch(/gw-0042 \(config\)/);
    // The oldest was recorded 5 min ago: its age against the host clock (no receiver to ask), not newest minus oldest.
    expect(r.stdout).toMatch(/pending 3 \(oldest 5 min, host clock\)/);
    expect(r.stdout).toMatch(/token\s+valid, 10 min old\s+password grants 1/);
    expect(r.stdout).not.toMatch(/SECRET/);
    expect(r.stdout).not.toMatch(/\u001b\[/);

    const j = await status(['status', '--json', '--config', config]);
    expect(j.code).toBe(2);
    const s = JSON.parse(j.stdout) as StatusSnapshot & { health: { level: string } };
    expect(s.source).toBe('database');
    expect(s.daemon.running).toBe(false);
    expect(s.outbox.pending).toBe(3);
    expect(s.outbox.sentTotal).toBe(1234);
    expect(s.disk.databaseBytes).toBeGreaterThan(0);
    expect(s.disk.freeBytes).toBeGreaterThan(0);
    expect(s.health.level).toBe('failing');
    expect(j.stdout).not.toMatch(/SECRET/);
  });

  it('down: the motion state the daemon stored, marked last known, with its odometer; an unapplied odometer set shown with a note', async () => {
    const dir = tempDir();
    const dataDir = path.join(dir, 'data');
    const config = writeConfig(dir, { ignition: { file: path.join(dir, 'ignition'), onAbove: 0 } });
    seedDatabase(dataDir, Date.now());
    // As the tracker stores it at a stop and at shutdown (motion-tracker.ts #record).
    const record: MotionRecord = {
      movement: { state: 'stopped', since: Date.UTC(2026, 10, 22, 8, 12, 3), at: { lat: 52.09, lon: 5.12 } },
      odometerM: 123_456_789.4,
      ignition: 'off',
    };
    const db = openDatabase({ dataDir, logger: silentLogger() });
    new MetaStore(db).setJson(MOTION_META_KEY, record);
    db.close();
    const r = await status(['status', '--config', config]);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/^vehicle\s+last known: stopped since 08:12:03Z {2}odometer 123,456\.8 km {2}ignition off \(stored\)$/m);
    const j = JSON.parse((await status(['status', '--json', '--config', config])).stdout) as StatusSnapshot;
    expect(j.motion).toEqual({
      state: 'stopped',
      since: '2026-11-22T08:12:03.000Z',
      odometerM: 123_456_789,
      ignition: 'off',
      lastKnown: true,
    });

    const odo = await runCli(['odometer', 'set', '200000', '--config', config]);
    expect(odo.code, odo.stderr).toBe(0);
    const after = await status(['status', '--config', config]);
    expect(after.stdout).toMatch(/odometer 200,000\.0 km {2}ignition off \(stored\)$/m);
    expect(after.stdout).toMatch(/odometer set to 200000\.0 km by the installer: the daemon starts from it at its next start/);
    // Without an ignition in the configuration (the same file rewritten) it is not wired, whatever was stored; motion.enabled false: no line.
    expect((await status(['status', '--config', writeConfig(dir)])).stdout).toMatch(/^vehicle\s+.*ignition not wired \(stored\)$/m);
    expect((await status(['status', '--config', writeConfig(dir, { motion: { enabled: false } })])).stdout).not.toMatch(/^vehicle/m);

    const none = tempDir();
    seedDatabase(path.join(none, 'data'), Date.now());
    // A database no daemon with motion ever wrote to has no motion line.
    expect((await status(['status', '--config', writeConfig(none)])).stdout).not.toMatch(/^vehicle/m);
  });

  it('down with a stale socket file left by a crash still falls back to the database', async () => {
    const dir = tempDir();
    const config = writeConfig(dir);
    seedDatabase(path.join(dir, 'data'), Date.now());
    // A daemon killed with SIGKILL leaves its socket file behind: connecting gives ECONNREFUSED.
    const sock = path.join(dir, 'status.sock');
    await new Promise<void>((resolve) => {
      execFile(
        process.execPath,
        ['-e', `require('net').createServer().listen(${JSON.stringify(sock)}, () => process.kill(process.pid, 'SIGKILL'))`],
        () => resolve(),
      );
    });
    expect(statSync(sock).isSocket()).toBe(true);
    const r = await status(['status', '--config', config]);
    expect(r.code).toBe(2);
    expect(r.stdout.split('\n')[0]).toMatch(/daemon not running/);
  });

  it('healthy: from the daemon socket, exit 0, fits 80 columns', async () => {
    const dir = tempDir();
    const config = writeConfig(dir);
    await serve(dir, () => liveSnapshot(Date.now(), dir));
    const r = await status(['status', '--config', config]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(/running, pid 4242, up 62 min\s+HEALTHY$/);
    expect(r.stdout).toMatch(/fix\s+3D\s+52\.09070 N 5\.12140 E\s+54 km\/h\s+HDOP 0\.8/);
    expect(r.stdout).toMatch(/sats\s+used 3\s+GPS 2\/2\s+GAL 1\/2/);
    expect(r.stdout).toMatch(/system clock \+0\.3 s/);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.length).toBeLessThanOrEqual(24);
    for (const l of lines) expect(l.length, l).toBeLessThanOrEqual(80);
  });

  it('degraded: no fix and a growing backlog, exit 1, with the reasons', async () => {
    const dir = tempDir();
    const config = writeConfig(dir);
    await serve(dir, () =>
      liveSnapshot(Date.now(), dir, (s) => {
        if (s.receiver) s.receiver.mode = 1;
        s.outbox.pending = 900;
        s.outbox.oldestPendingAgeS = 900;
      }),
    );
    const r = await status(['status', '--config', config]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/DEGRADED/);
    expect(r.stdout).toMatch(/fix\s+no fix/);
    expect(r.stdout).toMatch(/! backlog of 900 fixes, oldest 15 min/);
    const j = await status(['status', '--json', '--config', config]);
    expect(j.code).toBe(1);
    expect((JSON.parse(j.stdout) as { source: string }).source).toBe('daemon');
  });

  it('failing while running: credentials rejected, exit 2', async () => {
    const dir = tempDir();
    const config = writeConfig(dir);
    await serve(dir, () =>
      liveSnapshot(Date.now(), dir, (s) => {
        if (s.token) s.token.state = 'rejected';
      }),
    );
    const r = await status(['status', '--config', config]);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/! credentials rejected/);
  });

  it('--watch draws the satellite table and refreshes until SIGTERM', async () => {
    const dir = tempDir();
    const config = writeConfig(dir);
    let served = 0;
    await serve(dir, () => {
      served++;
      return liveSnapshot(Date.now(), dir);
    });
    const child = spawnCli(['status', '--watch', '--config', config]);
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    // Wait for two screens, then stop it (bounded by the test timeout, not a timer assertion).
    await waitFor('two snapshots served', () => served >= 2);
    await waitFor('two screens drawn', () => (out.match(/GNSS\s+id/g) ?? []).length >= 2);
    const code = await new Promise<number | null>((resolve) => {
      child.once('exit', (c) => resolve(c));
      child.kill('SIGTERM');
    });
    expect(code).toBe(0);
    expect(out).toMatch(/GPS\s+5\s+60\s+120\s+45 #########\. Y/);
    expect(out).toMatch(/GAL\s+19\s+5\s+300\s+- \.{10} n/);
  });
});

describe('status --watch on an 80-column terminal', () => {
  it.skipIf(spawnSync('sh', ['-c', 'command -v script']).status !== 0)(
    'wraps an error under its text, so its cause stays on the screen, and still fits 80 x 24',
    async () => {
      const dir = tempDir();
      const config = writeConfig(dir);
      const cause = '127.0.0.1:44413 unreachable (ECONNREFUSED)';
      await serve(dir, () =>
        liveSnapshot(Date.now(), dir, (s) => {
          s.outbox.pending = 40;
          s.upload.lastError = {
            code: 'PLATFORM_UNREACHABLE',
            class: 'transient',
            message: `PUT /otm/api/v5/events: ${cause}`,
            at: Date.now() - 3000,
          };
          s.platform = { lastAnswerAgeS: 400, failing: { message: `token refresh: ${cause}`, since: Date.now() - 360_000, forS: 360 } };
        }),
      );
      // A real terminal of 80 x 24 (util-linux script gives the CLI a pty).
      const cmd = `stty cols 80 rows 24; exec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} status --watch --config ${JSON.stringify(config)}`;
      const child = spawn('script', ['-qfec', cmd, '/dev/null'], { env: cliEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
      onTestFinished(() => {
        child.kill('SIGKILL');
      });
      let out = '';
      child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
      // A frame is whole once the next one starts (each begins with cursor-home).
      await waitFor('two whole frames', () => out.split('\u001b[H').length >= 4, { timeoutMs: 20_000 });
      // The last whole frame, as the screen shows it: from the last cursor-home, escapes removed.
      const frames = out.split('\u001b[H');
      const frame = (frames.at(-2) ?? '').replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '');
      const lines = frame.replace(/\n$/, '').split('\n');
      expect(lines.length, frame).toBeLessThanOrEqual(23);
      for (const l of lines) expect([...l].length, l).toBeLessThanOrEqual(80);
      expect(frame).not.toContain('…');
      // The cause, whole, under the upload error and in the health reason.
      const text = lines.map((l) => l.trim()).join(' ');
      // The age is 3 s when the snapshot is built; the frame may be drawn from one cached for up to
      // half a second and, on a loaded machine, drawn later still: "4 s ago" is as right.
      expect(text).toMatch(/last error PLATFORM_UNREACHABLE \(transient\) \d+ s ago \(host clock\): PUT /);
      expect(text).toContain(` s ago (host clock): PUT /otm/api/v5/events: ${cause}`);
      expect(text).toContain(`! platform not answering for 6 min (since `);
      expect(text).toContain(`token refresh: ${cause}`);
    },
  );
});

describe('StatusServer', () => {
  it('creates the socket 0660, answers unknown requests with an error and routes the fix subscription', async () => {
    const dir = tempDir();
    const fixes = new FixPublisher();
    const server = await serve(dir, () => liveSnapshot(Date.now(), dir), fixes);
    expect(statSync(server.socketPath).mode & 0o777).toBe(0o660);

    const answer = await new Promise<string>((resolve) => {
      const s = connect(server.socketPath, () => s.write('{"hello":1}\n'));
      let d = '';
      s.on('data', (c) => (d += c.toString()));
      s.on('close', () => resolve(d));
    });
    expect(JSON.parse(answer)).toMatchObject({ error: { code: 'UNKNOWN_REQUEST' } });

    const feed = new DaemonFixFeed({ socketPath: server.socketPath });
    const ac = new AbortController();
    const got: number[] = [];
    const reading = (async () => {
      for await (const f of feed.fixes(ac.signal)) {
        got.push(f.time);
        if (got.length === 2) ac.abort();
      }
    })();
    await waitFor('a subscriber to the fix feed', () => fixes.subscriberCount > 0);
    fixes.publish({ time: 1000, mode: 3, lat: 52, lon: 5 });
    fixes.publish({ time: 2000, mode: 3, lat: 52, lon: 5 });
    await reading;
    expect(got).toEqual([1000, 2000]);
  });
});
