/**
 * The demo (`npm start`): the platform simulator in this process, the real daemon (`telematics-agent
 * run`) as a child process against a temporary data directory, the synthetic receiver's drive
 * replayed at an accelerated pace, the ignition switched off and on at the depot, a short platform
 * outage in the middle, the live status screen
 * while it runs and a summary at the end. Loopback only: no network, no receiver.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, closeSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PlatformSimulator } from '../sim/index.js';
import { driveText, generateDrive } from '../sim/receiver/index.js';
import { requestSnapshot } from '../status/status-client.js';
import type { StatusSnapshot } from '../status/snapshot.js';
import { writeFileAtomic } from '../system/atomic-file.js';
import { DEMO_USER, writeDemoConfig } from './demo-config.js';
import type { DemoHeader } from './header.js';
import { DemoIgnition, depotIgnitionSteps } from './ignition.js';
import { DemoOutage, type DemoPhase } from './outage.js';
import { demoFrame, DemoScreen } from './screen.js';
import { demoProblems, isEngineEvent, renderSummary, tripLines, type DemoSummary } from './summary.js';

export interface DemoOptions {
  minutes: number;
  speed: number;
  seed: number;
  out: NodeJS.WritableStream & { isTTY?: boolean };
  color: boolean;
  /** Keep the temporary directory (config, database, daemon log) for a look afterwards. */
  keep?: boolean;
  /** Outage window as fractions of the drive (GNSS time); default 0.4 to 0.55. */
  outage?: { from: number; to: number };
  /** Shortest outage in wall-clock ms, so that the backlog shows at a fast pace; default 4000. */
  minOutageMs?: number;
  /** Access token lifetime in the simulator, s: short, so refreshes happen during the demo. */
  accessTtlS?: number;
  /** Ctrl-C: stop the daemon and the simulator, restore the terminal, remove the temp directory. */
  signal?: AbortSignal;
}

export interface DemoResult {
  summary: DemoSummary;
  ok: boolean;
  dir: string;
}

const DAEMON = fileURLToPath(new URL('./demo-daemon.js', import.meta.url));
const POLL_MS = 250;
/**
 * The depot stop lasts at least this long, s: motion.stopAfterS (60) and half a minute more, so the
 * demo shows a stop and a start at the depot at any --minutes (a 10-minute drive parks 150 s).
 */
const DEPOT_MIN_S = 90;

export async function runDemo(o: DemoOptions): Promise<DemoResult> {
  const startedAt = Date.now();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'telematics-demo-'));
  const say = (s: string): void => void o.out.write(s);
  const drive = generateDrive({ minutes: o.minutes, seed: o.seed, depotMinS: DEPOT_MIN_S });
  const replayFile = path.join(dir, 'drive.nmea');
  writeFileAtomic(replayFile, driveText(drive), { mode: 0o644 });
  const driveMs = (drive.epochs - 1) * 1000;
  const outage = new DemoOutage({ ...(o.outage ?? { from: 0.4, to: 0.55 }), minMs: o.minOutageMs ?? 4000 });
  say(
    `demo: ${(drive.epochs / 60).toFixed(1)} min synthetic drive (${drive.phases.map((p) => p.phase).join(' > ')}) at ${o.speed}x, data in ${dir}\n`,
  );

  const sim = new PlatformSimulator({ users: [DEMO_USER], accessTtlS: o.accessTtlS ?? 30, seed: o.seed });
  const urls = await sim.start();
  const ignitionFile = path.join(dir, 'ignition');
  const ignition = new DemoIgnition(ignitionFile, depotIgnitionSteps(drive.phases));
  ignition.start();
  const config = writeDemoConfig({ dir, urls, replayFile, replaySpeed: o.speed, ignitionFile });
  const socketPath = path.join(dir, 'status.sock');
  const logFile = path.join(dir, 'daemon.log');
  const logFd = openSync(logFile, 'a', 0o600);
  const child = spawn(process.execPath, [DAEMON, config], { stdio: ['ignore', logFd, logFd] });
  closeSync(logFd);
  let exited: number | null | undefined;
  child.once('exit', (code) => (exited = code));

  const screen = new DemoScreen({ out: o.out, color: o.color });
  let last: StatusSnapshot | undefined;
  let header: DemoHeader | undefined;
  const frame = (h: DemoHeader): string[] => demoFrame(h, last, { color: o.color, satellites: screen.tty, nowMs: Date.now() });
  // Generous: three times the replay's duration plus start-up; a stuck demo fails instead of hanging.
  const deadline = Date.now() + (driveMs / Math.max(o.speed, 0.1)) * 3 + 60_000;
  const phaseNow = (): DemoPhase =>
    outage.phase({ haveFix: (last?.receiver?.mode ?? 1) >= 2, driveEnded: last?.receiver?.link === 'ended' });
  /** city, depot or highway where the replay is now. */
  const stretchAt = (fixTime: number): string | undefined => {
    const t = (fixTime - drive.startTimeMs) / 1000;
    return (drive.phases.find((p) => t >= p.from && t < p.to) ?? drive.phases.at(-1))?.phase;
  };
  let phase: DemoPhase | undefined;
  screen.begin();
  try {
    for (;;) {
      if (o.signal?.aborted) throw new Error('demo interrupted');
      if (exited !== undefined) throw new Error(`the daemon exited with code ${exited}:\n${tail(logFile)}`);
      if (Date.now() > deadline)
        throw new Error(`the demo did not finish in time; last status:\n${last ? JSON.stringify(last.outbox) : 'none'}\n${tail(logFile)}`);
      last = await requestSnapshot(socketPath, 1000).catch(() => last);
      const r = last?.receiver;
      // The replay read to its end is the whole drive (the decoder drops a last epoch it cannot know is complete).
      const progress = r?.link === 'ended' ? 1 : r?.fixTime === undefined ? 0 : Math.min(1, (r.fixTime - drive.startTimeMs) / driveMs);
      if (r?.fixTime !== undefined) ignition.update((r.fixTime - drive.startTimeMs) / 1000);
      const change = outage.update(progress, last?.outbox.pending ?? 0, Date.now());
      if (change === 'start') sim.setFaults('events', { status503Rate: 1 });
      else if (change === 'end') sim.setFaults('events', undefined);
      const stats = sim.stats;
      const now = phaseNow();
      const stretch = r?.fixTime === undefined ? undefined : stretchAt(r.fixTime);
      header = {
        elapsedMs: Date.now() - startedAt,
        progress,
        ...(stretch !== undefined ? { stretch } : {}),
        phase: now,
        ...(last?.outbox.recorded !== undefined ? { recorded: last.outbox.recorded } : {}),
        ...(last ? { queued: last.outbox.pending } : {}),
        uploaded: sim.events.size,
        refreshes: stats.refreshes,
        passwordGrants: stats.passwordGrants,
      };
      screen.show(frame(header), now !== phase);
      phase = now;
      const finished =
        r?.link === 'ended' &&
        outage.state === 'after' &&
        last?.outbox.pending === 0 &&
        sim.events.size >= (last?.outbox.recorded ?? Infinity);
      if (finished) break;
      await new Promise((res) => setTimeout(res, POLL_MS));
    }
  } catch (e) {
    screen.end();
    await stopChild(child);
    await sim.stop();
    // A failure keeps the directory (its daemon.log explains it); an interrupted demo leaves nothing.
    if (o.signal?.aborted && !o.keep) rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  screen.end(header ? frame(header) : undefined);
  // Counted before the stop, like `recorded`: on stopping, the daemon records the fixes the path
  // policy still held back (its late window, or a drive that ends moving), which may or may not go
  // out before it exits.
  const delivered = sim.events.size;
  await stopChild(child);
  const vehicleEvents = [...sim.vehicleEvents.values()].map((r) => r.event);
  const summary: DemoSummary = {
    fixesRead: last?.receiver?.fixesRead,
    recorded: last?.outbox.recorded,
    delivered,
    duplicates: sim.stats.duplicates,
    passwordGrants: sim.stats.passwordGrants,
    refreshes: sim.stats.refreshes,
    outageRefusals: sim.stats.faults.events,
    peakBacklog: outage.peakBacklog,
    dead: last?.outbox.deadLetters ?? 0,
    trips: tripLines(vehicleEvents.filter((e) => !isEngineEvent(e))),
    engine: { lines: tripLines(vehicleEvents.filter(isEngineEvent)), changes: ignition.changes },
  };
  await sim.stop();
  say(renderSummary(summary));
  if (!o.keep) rmSync(dir, { recursive: true, force: true });
  else say(`data kept in ${dir} (config.json, data/, daemon.log)\n`);
  return { summary, ok: demoProblems(summary).length === 0, dir };
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-15).join('\n');
  } catch {
    return '(no daemon log)';
  }
}

/** SIGTERM, as systemd stops the service; SIGKILL only if it does not stop within 10 s. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
