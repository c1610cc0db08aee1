/**
 * npm run bench:powercut [-- --trips 20] [--seed 1] [--pace 10]
 *
 * The power cut at ignition-off, end to end: the real daemon (`run`, dist/) reads a 10 Hz drive
 * from a pty (socat) and delivers to the platform simulator in this process. The drive is `--trips`
 * trips (1-3 legs of 300-900 m at 30-60 km/h, with red lights of 10-40 s between legs), each ending
 * in a park; 5-30 s after the vehicle stood still (seeded) the daemon is SIGKILLed, the gateway
 * stays off for most of the park and comes back 10-30 s before the vehicle leaves (the ignition on
 * before moving off), so the stop, not yet confirmed at the cut (motion.stopAfterS 60 s), must be
 * made at the next start, dated when the vehicle stood still, and sent once.
 *
 * Printed per trip: its distance, when the cut came, the distance lost at the cut (the daemon's
 * odometer just before the kill minus what it stored), the dating error of the trip's stop and of
 * the start that follows; then the totals: the odometer (status and last event) against the
 * distance driven, and the events sent once, missing, duplicated (one stop under two ids),
 * spurious, and resent under the same id (which the platform keeps once). Goals: odometer within
 * 1 %, every stop and start once, dated within 5 s. Printed, never asserted.
 *
 * SIGKILL stands for the power cut: SQLite runs WAL with synchronous=FULL, so every commit is
 * fsynced before it returns and a cut loses what came after the last commit, as SIGKILL does
 * (bench/powercut-rig.ts). The drive is fed `--pace` times faster than real time (the motion logic
 * runs on the GNSS times in the sentences) with storage.commitIntervalMs scaled by the same factor,
 * so that a commit still spans about a second of driving. Needs socat.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, realpathSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PlatformSimulator } from '../src/sim/index.js';
import { seededRandom } from '../src/sim/random.js';
import type { Leg } from '../src/sim/receiver/index.js';
import { requestSnapshot } from '../src/status/status-client.js';
import { numberArg } from './args.js';
import {
  afterKill,
  buildPowerCutDrive,
  countLogged,
  DATING_S,
  driveLeg,
  expectedEvents,
  feedWithCuts,
  fmt,
  judgeEvents,
  ODOMETER_PCT,
  park,
  type Cut,
} from './powercut-rig.js';

const TRIPS = numberArg('trips', 20);
const SEED = numberArg('seed', 1);
const PACE = numberArg('pace', 10);
const COMMIT_MS = Math.round(1000 / PACE);
/** The product's default. */
const STOP_AFTER_S = 60;
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const CLI = path.join(REPO, 'dist/cli/main.js');
const say = (s: string) => process.stdout.write(`${s}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface TripPlan {
  /** Seconds after standing still that the power goes. */
  cutAfterS: number;
  /** Seconds before leaving that the gateway is back (the last trip: before the end of the drive). */
  backBeforeS: number;
}

/** The legs and the cut plan, all from the seed. */
function plan(): { legs: Leg[]; trips: TripPlan[] } {
  const random = seededRandom(SEED);
  const between = (lo: number, hi: number) => lo + (hi - lo) * random();
  const legs: Leg[] = [park(STOP_AFTER_S + 15)];
  const trips: TripPlan[] = [];
  let heading = 0;
  for (let t = 0; t < TRIPS; t++) {
    const n = 1 + Math.floor(random() * 3);
    for (let l = 0; l < n; l++) {
      if (l > 0) legs.push(park(Math.round(between(10, 40))));
      heading = (heading + 90 * (1 + Math.floor(random() * 3))) % 360;
      legs.push(driveLeg(heading, Math.round(between(300, 900)), between(30, 60) / 3.6));
    }
    const last = t === TRIPS - 1;
    // Parks of 2-4 minutes: the gateway is off for most of each, which costs no wall time.
    legs.push(park(last ? 75 : Math.round(between(120, 240))));
    trips.push({ cutAfterS: Math.round(between(5, 30) * 10) / 10, backBeforeS: last ? 15 : Math.round(between(10, 30)) });
  }
  return { legs, trips };
}

async function main(): Promise<void> {
  if (spawnSync('sh', ['-c', 'command -v socat']).status !== 0) {
    process.stderr.write('bench:powercut needs socat (apt-get install socat)\n');
    process.exit(2);
  }
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: npm run build`);
  const { legs, trips } = plan();
  const drive = buildPowerCutDrive(legs, { seed: SEED, stopAfterS: STOP_AFTER_S });
  if (drive.stands.length !== TRIPS + 1) throw new Error(`${drive.stands.length} stands for ${TRIPS} trips`);
  const end = drive.epochs.at(-1)!.time;
  const cuts: Cut[] = trips.map((t, k) => {
    const stand = drive.stands[k + 1]!;
    const at = stand.from + t.cutAfterS * 1000;
    return { label: `trip ${k + 1}`, at, resumeAt: (stand.to ?? end) - t.backBeforeS * 1000 };
  });

  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'ta-bench-powercut-')));
  const sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'pw' }] });
  const urls = await sim.start();
  const input = path.join(dir, 'gps-in');
  const link = path.join(dir, 'gps-dev');
  const socat = spawn('socat', [`pty,raw,echo=0,link=${input}`, `pty,raw,echo=0,link=${link}`], { stdio: 'ignore' });
  let daemon: ChildProcess | undefined;
  let logFile = '';
  const exited = (c: ChildProcess) =>
    new Promise<void>((r) => (c.exitCode !== null || c.signalCode !== null ? r() : c.once('exit', () => r())));
  const interrupted = (signal: NodeJS.Signals) => {
    daemon?.kill('SIGKILL');
    socat.kill();
    rmSync(dir, { recursive: true, force: true });
    process.kill(process.pid, signal);
  };
  process.once('SIGINT', interrupted).once('SIGTERM', interrupted);
  let fd: number | undefined;
  try {
    for (let i = 0; i < 500 && !(existsSync(input) && existsSync(link)); i++) await sleep(20);
    const device = realpathSync(link);
    const dataDir = path.join(dir, 'data');
    const socket = path.join(dir, 'status.sock');
    writeFileSync(path.join(dir, 'password'), 'pw\n', { mode: 0o600 });
    const configFile = path.join(dir, 'config.json');
    const config = {
      environment: 'staging',
      platform: { authUrl: urls.authUrl, deviceUrl: urls.deviceUrl, planningUrl: urls.planningUrl, startupJitterS: 0 },
      credentials: { username: 'agent', passwordFile: path.join(dir, 'password') },
      device: { externalSystemId: 'bench-fleet', externalDeviceId: 'bench-gw', carrierCode: 'SIM' },
      gnss: { path: device, baudRate: 115200 },
      storage: { commitIntervalMs: COMMIT_MS },
      dataDir,
      status: { socketPath: socket },
    };
    writeFileSync(configFile, JSON.stringify(config, null, 2), { mode: 0o600 });

    let starts = 0;
    const start = async (): Promise<void> => {
      logFile = path.join(dir, `daemon-${++starts}.log`);
      const log = openSync(logFile, 'a');
      const child = spawn(process.execPath, [CLI, 'run', '--config', configFile], { stdio: ['ignore', log, log] });
      closeSync(log);
      daemon = child;
      const t0 = performance.now();
      for (;;) {
        if (child.exitCode !== null) throw new Error(`the daemon exited with ${child.exitCode}:\n${readFileSync(logFile, 'utf8')}`);
        const snap = await requestSnapshot(socket, 1000).catch(() => undefined);
        if (snap?.receiver?.link === 'open') return;
        if (performance.now() - t0 > 60_000)
          throw new Error(`the daemon did not open the receiver within 60 s:\n${readFileSync(logFile, 'utf8')}`);
        await sleep(25);
      }
    };
    const t0 = performance.now();
    await start();
    fd = openSync(input, 'w');
    const out = fd;
    const records = await feedWithCuts({
      epochs: drive.epochs,
      pace: PACE,
      cuts,
      write: (text) => writeSync(out, text),
      logged: (kind) => countLogged(readFileSync(logFile, 'utf8'), kind),
      dataDir,
      device,
      cut: async (record) => {
        const live = await requestSnapshot(socket, 2000).catch(() => undefined);
        if (live?.motion) record.liveM = live.motion.odometerM;
        const d = daemon!;
        d.kill('SIGKILL');
        await exited(d);
        afterKill(record, { dataDir, device }, drive.distanceAt);
        await start();
      },
    });
    const expected = expectedEvents(drive);
    const deadline = performance.now() + 120_000;
    for (;;) {
      const snap = await requestSnapshot(socket, 2000).catch(() => undefined);
      if (snap?.outbox.pending === 0 && sim.vehicleEvents.size >= expected.length) break;
      if (performance.now() > deadline) {
        say(`warning: not every event delivered within 120 s (${sim.vehicleEvents.size} of ${expected.length})`);
        break;
      }
      await sleep(200);
    }
    const final = await requestSnapshot(socket, 5000);
    daemon!.kill('SIGTERM');
    await exited(daemon!);
    const wallS = (performance.now() - t0) / 1000;
    const judged = judgeEvents(drive, sim.vehicleEvents.values());

    const drivenS = drive.epochs.length / 10;
    say(
      `bench:powercut: ${TRIPS} trips, each ended by a power cut (SIGKILL) 5-30 s after the vehicle stood still; ${fmt(drive.distanceM / 1000, 2)} km, ${fmt(drivenS / 60)} min of drive (seed ${SEED}, ${drive.lights} red lights)`,
    );
    say(
      `assumes: 10 Hz fed at ${PACE}x real time with storage.commitIntervalMs ${COMMIT_MS} (a commit spans ~1 s of driving, as the default 1000 ms does live); motion.stopAfterS ${STOP_AFTER_S} (default: no stop is confirmed before its cut); the gateway off from the cut until 10-30 s before the vehicle leaves; SIGKILL for the cut (WAL, synchronous=FULL: every commit fsynced); recording.mode path`,
    );
    say(`goals: odometer within ${ODOMETER_PCT} %; every stop and start sent once, dated within ${DATING_S} s\n`);
    const header = ['trip', 'km', 'cut after', 'lost at cut', 'stop dating', 'start dating', 'stop ids', 'start ids'];
    const rows = records.map((r, k) => {
      const stand = k + 1;
      const stop = judged.events.find((e) => e.eventType === 'stopMovingEvent' && e.stand === stand);
      const startE = judged.events.find((e) => e.eventType === 'startMovingEvent' && e.stand === stand);
      const tripKm = (drive.stands[stand]!.distanceM - drive.stands[stand - 1]!.distanceM) / 1000;
      const dating = (s: number | undefined) => (s === undefined ? '-' : `${s >= 0 ? '+' : ''}${fmt(s)} s`);
      return [
        String(k + 1),
        fmt(tripKm, 2),
        `${fmt((r.cut.at - drive.stands[stand]!.from) / 1000)} s`,
        r.lostM === undefined ? '-' : `${fmt(r.lostM)} m`,
        dating(stop?.datingS),
        startE ? dating(startE.datingS) : 'end',
        String(stop?.ids.length ?? 0),
        startE ? String(startE.ids.length) : '-',
      ];
    });
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
    const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
    say(line(header));
    for (const r of rows) say(line(r));
    const first = judged.events.find((e) => e.eventType === 'startMovingEvent' && e.stand === 0);
    if (first) say(`(the first start, from the park the drive began in: ${fmt(first.datingS ?? Number.NaN)} s, ${first.ids.length} id)`);

    const lost = records.map((r) => r.lostM ?? Number.NaN);
    const odometer = final.motion?.odometerM ?? Number.NaN;
    const found = judged.events.filter((e) => e.ids.length > 0);
    say('');
    say(
      `  lost at the cuts     ${fmt(lost.reduce((a, b) => a + b, 0))} m in all, at most ${fmt(Math.max(...lost))} m (the live odometer before the kill, in whole metres as status gives it, minus the stored one: +-0.5 m is rounding)`,
    );
    say(
      `  odometer             ${odometer} m for ${fmt(drive.distanceM, 0)} m driven: ${fmt((odometer / drive.distanceM - 1) * 100, 2)} % (status at the end)`,
    );
    if (judged.lastOdometer)
      say(
        `  last event odometer  ${judged.lastOdometer.odometerM} m for ${fmt(judged.lastOdometer.trueM, 0)} m: ${fmt(judged.lastOdometer.errorPct, 2)} %`,
      );
    say(
      `  events               ${expected.length} expected, ${found.filter((e) => e.ids.length === 1).length} sent once, ${judged.missing} missing, ${judged.duplicates} duplicates (another id), ${judged.spurious.length} spurious, ${judged.resent} resent under the same id (kept once by the platform; delivered rows are deleted every 30 s of wall time, ${fmt((30 * PACE) / 60)} min of drive at this pace, so a faster pace resends more)`,
    );
    say(`  dating               worst ${fmt(judged.worstDatingS)} s`);
    say(
      `  stops seen before their cut  ${records.filter((r) => r.stored?.state === 'stopped').length} of ${records.length} (stopAfterS ${STOP_AFTER_S} s)`,
    );
    say(`  wall time            ${fmt(wallS)} s (${starts} daemon starts)`);
    const pass =
      Math.abs(odometer / drive.distanceM - 1) * 100 <= ODOMETER_PCT &&
      judged.missing === 0 &&
      judged.duplicates === 0 &&
      judged.spurious.length === 0 &&
      judged.worstDatingS <= DATING_S;
    say(`  result               ${pass ? 'PASS' : 'FAIL'}`);
  } finally {
    if (fd !== undefined) closeSync(fd);
    if (daemon && daemon.exitCode === null && daemon.signalCode === null) {
      daemon.kill('SIGKILL');
      await exited(daemon);
    }
    socat.kill();
    await sim.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
