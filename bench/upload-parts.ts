import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { configSchemas } from '../src/config/schema.js';
import { openDatabase } from '../src/store/database.js';
import { silentLogger } from '../src/log.js';
import { toLocationUpdateEvent } from '../src/platform/otm5/event.js';
import { driveText, generateDrive } from '../src/sim/receiver/index.js';
import { eventIdBytes, formatUuid } from '../src/store/event-id.js';
import { ManualClock, systemClock } from '../src/system/clock.js';
import { Uploader } from '../src/upload/uploader.js';
import { DEVICE, benchDir, cpuSeconds, fixAt, fmt, openOutbox, platform, registered, rssBytes, writeBytes } from './upload-rig.js';

/** Backlog drain: N queued fixes to the simulator on loopback through the real uploader. */
export async function drain(n: number, concurrency: number, external: boolean): Promise<{ rate: number; cpuRate: number }> {
  const dir = benchDir();
  const { db, outbox } = openOutbox(dir, { commitMaxFixes: 10_000 });
  await outbox.start();
  for (let i = 0; i < n; i++) outbox.record(fixAt(i));
  outbox.flush();
  const p = await platform(dir, concurrency, external);
  await p.client.send({ method: 'GET', url: `${p.urls.deviceUrl}` }); // token first: measure the drain only
  const uploader = new Uploader({
    queue: outbox,
    requester: p.client,
    registration: registered,
    eventsUrl: `${p.urls.planningUrl}/otm/api/v5/events`,
    upload: { ...configSchemas().configSchema.shape.upload.parse({}), concurrency },
    clock: systemClock,
    logger: silentLogger(),
  });
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  await uploader.start();
  await new Promise<void>((resolve) => {
    const t = setInterval(() => {
      if (outbox.pendingCount() === 0) {
        clearInterval(t);
        resolve();
      }
    }, 20);
  });
  const s = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  const delivered = external
    ? ((await (await fetch(`${p.urls.adminUrl}/stats`)).json()) as { requests: { events: number } }).requests.events
    : p.sim.events.size;
  await uploader.stop();
  await outbox.stop();
  db.close();
  await p.close();
  if (external ? delivered < n : delivered !== n) throw new Error(`drain delivered ${delivered} of ${n}`);
  return { rate: n / s, cpuRate: n / ((c.user + c.system) / 1e6) };
}

/** Disk bytes per recorded fix: 60 s of fix time at 10 Hz, one commit per fix-time second. */
export async function disk(scenario: 'offline' | 'online-before-commit' | 'online-after-commit', commitEveryS = 1): Promise<number> {
  const dir = benchDir();
  // Fix time drives the outbox's clock, so that its timed duties (batched deletes, the counters'
  // minute) come as often as they would in real time while the run goes faster.
  const clock = new ManualClock();
  const { db, outbox } = openOutbox(dir, { commitIntervalMs: 60_000 }, clock);
  await outbox.start();
  // Warm-up: a few minutes of backlog, so the table is not one page (the steady offline case).
  for (let i = 0; i < 3000; i++) outbox.record(fixAt(i));
  outbox.flush();
  db.pragma('wal_checkpoint(TRUNCATE)');
  const before = writeBytes();
  let i = 3000;
  for (let second = 0; second < 60; second++) {
    clock.advance(1000);
    for (let k = 0; k < 10; k++, i++) {
      outbox.record(fixAt(i));
      if (scenario === 'online-before-commit') outbox.delivered(outbox.newest()!);
    }
    // The timer's commit, once every commitEveryS (fix-time) seconds; run faster than real time.
    if ((second + 1) % commitEveryS === 0) outbox.flush();
    if (scenario === 'online-after-commit') for (const e of outbox.after(0, 100)) outbox.delivered(e);
  }
  outbox.flush();
  // Count the checkpoint too: every WAL page is written to the database file once more.
  db.pragma('wal_checkpoint(PASSIVE)');
  const bytes = writeBytes() - before;
  await outbox.stop();
  db.close();
  return bytes / 600;
}

/** Request bytes per event on the wire (TCP payload from client to server), and the bearer's share. */
export async function wire(n = 500): Promise<{ perEvent: number; bearerLine: number; body: number }> {
  const dir = benchDir();
  const p = await platform(dir, 1);
  let bytes = 0;
  const proxy = net.createServer((client) => {
    const upstream = net.connect(p.urls.port, '127.0.0.1');
    client.on('data', (b) => {
      bytes += b.length;
      upstream.write(b);
    });
    upstream.on('data', (b) => client.write(b));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  const port = (proxy.address() as net.AddressInfo).port;
  const token = (await p.tokens.accessToken()).token;
  const events = Array.from({ length: n }, (_, i) => {
    const f = fixAt(i);
    return toLocationUpdateEvent(
      { ...f, lat: f.lat!, lon: f.lon!, eventId: formatUuid(eventIdBytes(DEVICE.externalSystemId, DEVICE.externalDeviceId, f.time)) },
      DEVICE,
      { licensePlate: 'AB-123-C' },
    );
  });
  const before = bytes;
  for (const e of events) await p.client.send({ method: 'PUT', url: `http://127.0.0.1:${port}/otm/api/v5/events`, json: e });
  const perEvent = (bytes - before) / n;
  const body = events.reduce((s, e) => s + Buffer.byteLength(JSON.stringify(e)), 0) / n;
  proxy.close();
  await p.close();
  return { perEvent, bearerLine: Buffer.byteLength(`authorization: Bearer ${token}\r\n`), body };
}

/**
 * The least a durable commit can cost: one row of 8 bytes per transaction, same pragmas. Linux
 * counts write_bytes per 4 KiB page-cache page dirtied, and every fsync'd commit re-dirties at
 * least the WAL's last page, whatever the row size or the page size.
 */
export function commitFloor(commits = 120): number {
  const dir = benchDir();
  const db = openDatabase({ dataDir: dir, logger: silentLogger() });
  db.exec('CREATE TABLE floor (seq INTEGER PRIMARY KEY, b BLOB)');
  const insert = db.prepare('INSERT INTO floor (b) VALUES (?)');
  const row = Buffer.alloc(8, 1);
  db.pragma('wal_checkpoint(TRUNCATE)');
  const before = writeBytes();
  for (let i = 0; i < commits; i++) insert.run(row);
  db.pragma('wal_checkpoint(PASSIVE)');
  const bytes = writeBytes() - before;
  db.close();
  return bytes / commits;
}

/**
 * CPU and RSS of the real daemon (`run`) replaying a 10 Hz drive in real time against the
 * simulator, measured after `warmupS` (start-up: module loading, registration, the first token,
 * the compiler and the GC's memory reducer settling).
 */
export async function steady(
  seconds: number,
  warmupS = 30,
): Promise<{ cpuPerHour: number; rss: number; rssMax: number; recorded: number }> {
  const dir = benchDir();
  const p = await platform(dir);
  const replay = path.join(dir, 'drive.nmea');
  writeFileSync(replay, driveText(generateDrive({ minutes: Math.ceil((seconds + warmupS) / 60) + 1, hz: 10 })));
  writeFileSync(path.join(dir, 'password'), 'pw\n', { mode: 0o600 });
  const config = {
    platform: { authUrl: p.urls.authUrl, deviceUrl: p.urls.deviceUrl, planningUrl: p.urls.planningUrl },
    credentials: { username: 'agent', passwordFile: path.join(dir, 'password') },
    device: { externalSystemId: 'bench-fleet', externalDeviceId: 'bench-gw', carrierCode: 'SIM' },
    gnss: { replayFile: replay, replaySpeed: 1 },
    dataDir: path.join(dir, 'data'),
    log: { level: 'warn' },
    status: { socketPath: path.join(dir, 'status.sock') },
  };
  writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config));
  const main = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../cli/main.js');
  const child = spawn(process.execPath, [main, 'run', '--config', path.join(dir, 'config.json')], { stdio: 'inherit' });
  await new Promise((r) => setTimeout(r, warmupS * 1000));
  const cpu0 = cpuSeconds(child.pid!);
  const events0 = p.sim.events.size;
  let rssMax = 0;
  for (let s = 0; s < seconds; s++) {
    await new Promise((r) => setTimeout(r, 1000));
    rssMax = Math.max(rssMax, rssBytes(child.pid!));
  }
  const cpu = cpuSeconds(child.pid!) - cpu0;
  const rss = rssBytes(child.pid!);
  const recorded = p.sim.events.size - events0;
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  await p.close();
  return { cpuPerHour: (cpu / seconds) * 3600, rss, rssMax, recorded };
}

export { fmt };
