import { closeSync, openSync, writeSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { PlatformSimulator } from '../../src/sim/index.js';
import { driveText, generateDrive } from '../../src/sim/receiver/index.js';
import { issueServerCertificate, makeThrowawayCa } from '../../src/sim/throwaway-ca.js';
import { requestSnapshot } from '../../src/status/status-client.js';
import type { StatusSnapshot } from '../../src/status/snapshot.js';
import { Agent } from '../../src/agent.js';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/log.js';
import { systemClock, type Clock } from '../../src/system/clock.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/tmp.js';
import { waitFor } from '../helpers/wait.js';
import { daysSincePattern } from '../helpers/days.js';
import { E2E_TUNING, HAVE_SOCAT, ptyPair, writeConfig } from './daemon.js';
import { UPLOAD_BACKOFF, type UploadBackoff } from '../../src/upload/retry-decision.js';
import type { PlatformTuning } from '../../src/platform/tuning.js';

if (!HAVE_SOCAT) process.stderr.write('skipping the wrong-clock e2e: socat is missing (apt-get install socat)\n');

const TWO_YEARS_MS = 730 * 86_400_000;

/**
 * The whole agent (the composition root, in this process) with a wrong system clock: a gateway whose
 * clock is two years ahead (a bad RTC) boots, reads a live receiver on a pty (GNSS time = the real
 * time), and meets the platform over TLS. CI cannot move the system clock, so the agent is given
 * an injected Clock whose wall time is offset (its monotonic time is the system's, as a real clock
 * step leaves it), and the simulator serves a certificate outside its dates by the real clock, as
 * a valid one is by a clock two years ahead (TLS judges by the real clock). Then the clock is
 * "set" (offset 0, and the simulator serves a valid certificate): delivery resumes, and status
 * (the built CLI, asking the agent's socket) measures its ages on the monotonic clock across the step.
 */
describe.skipIf(!HAVE_SOCAT)('a wrong system clock on the whole agent', () => {
  it('names the clock and by how much, says FAILING, and ages stay true across the clock being set', { timeout: 180_000 }, async () => {
    const { sim, ca, expired, config, start, setClock, snapshot } = await setUp(TWO_YEARS_MS, 'expired');

    // 1. First boot, two years ahead: the token and the registration fail on the certificate's dates.
    let d = await start();
    await waitFor(
      'the receiver gives GNSS time and TLS refuses the certificate',
      async () => {
        const s = await snapshot();
        return (s?.receiver?.clockOffsetS ?? 0) > 700 * 86400 && d.log().includes('PLATFORM_TLS_CLOCK');
      },
      { timeoutMs: 60_000, detail: d.log },
    );
    await waitFor(
      'the registration names the clock',
      () => /device registration failed.*\n?.*730 d \(2\.0 years\) ahead of GNSS/.test(d.log()),
      {
        timeoutMs: 30_000,
        detail: d.log,
      },
    );
    const booted = await runCli(['status', '--config', config]);
    process.stderr.write(`status, first boot two years ahead:\n${booted.stdout}\n`);
    expect(booted.code, booted.stdout).toBe(2);
    expect(booted.stdout).toMatch(/FAILING/);
    expect(booted.stdout).toMatch(/! system clock ahead of GNSS by 730 d: TLS certificate checks fail until it is set/);
    expect(d.log()).not.toMatch(/configuration problem|platform\.caFile/);

    // 2. The clock is set: registration and delivery follow.
    setClock(0, ca);
    await waitFor('fixes delivered once the clock is set', () => sim.events.size >= 3, { timeoutMs: 60_000, detail: d.log });
    await d.stop();

    // 3. The next boot is two years ahead again (the RTC lost it): now the upload meets TLS, and its
    //    error carries a wall stamp two years in the future.
    setClock(TWO_YEARS_MS, expired);
    d = await start();
    await waitFor(
      'the upload fails on the clock',
      async () =>
        (await snapshot())?.upload.lastError?.code === 'PLATFORM_TLS_CLOCK' &&
        ((await snapshot())?.receiver?.clockOffsetS ?? 0) > 700 * 86400,
      { timeoutMs: 60_000, detail: d.log },
    );
    const delivered = sim.events.size;
    const ahead = await runCli(['status', '--config', config]);
    process.stderr.write(`status, second boot two years ahead:\n${ahead.stdout}\n`);
    expect(ahead.code, ahead.stdout).toBe(2);
    expect(ahead.stdout).toMatch(/! system clock ahead of GNSS by 730 d: TLS certificate checks fail until it is set/);

    // 4. Set again: across the step, the last error is seconds old (it was "0 s ago", a negative age
    //    clamped, and health kept reporting it as current for two years), and the success is newer.
    await uploadBetweenTries(snapshot, d.log);
    setClock(0, ca);
    await waitFor('delivery resumes', () => sim.events.size > delivered + 2, { timeoutMs: 60_000, detail: d.log });
    let s: StatusSnapshot | undefined;
    await waitFor(
      'a snapshot after the success',
      async () => {
        s = await snapshot();
        return s?.upload.lastSuccessAgeS !== undefined && Math.abs(s.receiver?.clockOffsetS ?? 99) < 5;
      },
      { timeoutMs: 30_000, detail: d.log },
    );
    const u = s!.upload;
    expect(u.lastError?.code).toBe('PLATFORM_TLS_CLOCK');
    expect(u.lastError!.at! - s!.takenAt).toBeGreaterThan(700 * 86_400_000);
    expect(u.lastError!.ageS).toBeGreaterThan(u.lastSuccessAgeS!);
    expect(u.lastError!.ageS).toBeLessThan(120);
    const after = await runCli(['status', '--config', config]);
    process.stderr.write(`status, after the clock was set:\n${after.stdout}\n`);
    expect(after.stdout).toMatch(/last success \d+ s ago/);
    expect(after.stdout).toMatch(/last error PLATFORM_TLS_CLOCK \(transient\) \d+ (s|min) ago: /);
    expect(after.stdout).not.toMatch(/upload failing: PLATFORM_TLS_CLOCK|system clock (ahead of|behind) GNSS/);
    await d.stop();
  });

  it(
    'booted at 1970 with a registered device: FAILING, decades behind named; after the clock is set the error is seconds old',
    { timeout: 180_000 },
    async () => {
      const { sim, ca, future, config, start, setClock, snapshot } = await setUp(0, 'future');
      // A run with the clock right (the previous boot): registered, delivering, a success stored.
      setClock(0, ca);
      let d = await start();
      await waitFor('fixes delivered', () => sim.events.size >= 3, { timeoutMs: 60_000, detail: d.log });
      await d.stop();

      // Power cut, no RTC: the next boot is at 1970, and TLS finds the certificate not yet valid.
      const at1970 = Date.UTC(1970, 0, 1, 0, 1) - Date.now();
      setClock(at1970, future);
      d = await start();
      await waitFor(
        'the upload fails on the clock',
        async () => {
          const s = await snapshot();
          return s?.upload.lastError?.code === 'PLATFORM_TLS_CLOCK' && (s.receiver?.clockOffsetS ?? 0) < -20_000 * 86400;
        },
        { timeoutMs: 60_000, detail: d.log },
      );
      const behind = await runCli(['status', '--config', config]);
      process.stderr.write(`status, booted at 1970:\n${behind.stdout}\n`);
      expect(behind.code, behind.stdout).toBe(2);
      const days = daysSincePattern(Date.UTC(1970, 0, 1, 0, 1));
      expect(behind.stdout).toMatch(new RegExp(`! system clock behind GNSS by ${days} d: TLS certificate checks fail until it is set`));
      expect(behind.stdout).toMatch(
        new RegExp(`the system clock is ${days} d \\(\\d+\\.\\d years\\) behind GNSS time \\(clock says 1970-01-01T`),
      );
      expect(d.log()).not.toMatch(/configuration problem|platform\.caFile/);

      // NTP sets the clock: the error stamped 1970 is seconds old on the monotonic clock (it was decades ago).
      const delivered = sim.events.size;
      await uploadBetweenTries(snapshot, d.log);
      setClock(0, ca);
      await waitFor('delivery resumes', () => sim.events.size > delivered + 2, { timeoutMs: 60_000, detail: d.log });
      let s: StatusSnapshot | undefined;
      await waitFor(
        'a snapshot after the success',
        async () => {
          s = await snapshot();
          return s?.upload.lastSuccessAgeS !== undefined && Math.abs(s.receiver?.clockOffsetS ?? 99) < 5;
        },
        { timeoutMs: 30_000, detail: d.log },
      );
      expect(s!.takenAt - s!.upload.lastError!.at!).toBeGreaterThan(20_000 * 86_400_000);
      expect(s!.upload.lastError!.ageS).toBeLessThan(120);
      const set = await runCli(['status', '--config', config]);
      process.stderr.write(`status, after the clock was set from 1970:\n${set.stdout}\n`);
      expect(set.stdout).toMatch(/last error PLATFORM_TLS_CLOCK \(transient\) \d+ (s|min) ago: /);
      expect(set.stdout).not.toMatch(/\d{4,} d ago|upload failing|system clock (ahead of|behind) GNSS/);
      await d.stop();
    },
  );

  it(
    'the clock set right is news: the upload retries at once, not after the backoff it grew on the wrong clock',
    { timeout: 180_000 },
    async () => {
      // The daemon's own upload backoff: 1 s doubling to 300 s.
      const { sim, ca, expired, config, start, setClock, snapshot } = await setUp(0, 'expired', UPLOAD_BACKOFF);
      setClock(0, ca);
      let d = await start();
      await waitFor('fixes delivered', () => sim.events.size >= 3, { timeoutMs: 60_000, detail: d.log });
      await d.stop();

      // Two years ahead: the backoff grows to 16-32 s (six failures).
      setClock(TWO_YEARS_MS, expired);
      d = await start();
      await waitFor(
        'the upload fails on the clock, measured against GNSS',
        async () => {
          const s = await snapshot();
          return s?.upload.lastError?.code === 'PLATFORM_TLS_CLOCK' && (s.receiver?.clockOffsetS ?? 0) > 700 * 86400;
        },
        { timeoutMs: 60_000, detail: d.log },
      );
      // doctor beside it: the clock is the measured cause, so it is named alone, and its check fails.
      const doctor = await runCli(['doctor', '--config', config]);
      process.stderr.write(`doctor, two years ahead:\n${doctor.stdout}\n`);
      expect(doctor.stdout).toMatch(/^FAIL\s+clock vs GNSS\s+system clock 730 d \(2\.0 years\) ahead of GNSS time: TLS refuses/m);
      expect(doctor.stdout).toMatch(
        /fix: set the system clock \(it is 730 d \(2\.0 years\) ahead of GNSS time\): TLS judges the certificate by it/,
      );
      expect(doctor.stdout).not.toMatch(/platform\.caFile/);
      await waitFor('six uploads failed on the clock', async () => ((await snapshot())?.upload.lanes?.consecutiveFailures as number) >= 6, {
        timeoutMs: 120_000,
        intervalMs: 100,
        detail: d.log,
      });
      // Set right just after a failure: the whole step (16-32 s) is still to wait.
      const delivered = sim.events.size;
      setClock(0, ca);
      const setAt = Date.now();
      await waitFor('delivery after the clock was set', () => sim.events.size > delivered, { timeoutMs: 60_000, detail: d.log });
      const afterS = (Date.now() - setAt) / 1000;
      process.stderr.write(
        `clock set right after six failures on it: first delivery ${afterS.toFixed(1)} s later (backoff step then 16-32 s)\n`,
      );
      expect(d.log()).toContain('the system clock was set: retrying the upload now');
      // The clock check runs every second; the rest is a loaded machine's slack.
      expect(afterS).toBeLessThan(10);
      await d.stop();
    },
  );

  it(
    'a first boot with the clock wrong: once it is set, the token grant and the registration go at once, not after their backoffs',
    { timeout: 180_000 },
    async () => {
      // Backoffs long enough to tell: the first token wait 30-60 s, the registration's at least that.
      const { sim, ca, start, setClock } = await setUp(TWO_YEARS_MS, 'expired', undefined, {
        tokenServiceRetryMinS: 60,
        tokenServiceRetryMaxS: 600,
        registrationRetryMinS: 60,
        registrationRetryMaxS: 600,
      });
      const d = await start();
      await waitFor(
        'the first token grant and registration fail on the clock',
        () => /PLATFORM_TLS_CLOCK[^\n]*password grant failed; backing off/.test(d.log()) && /device registration failed/.test(d.log()),
        { timeoutMs: 60_000, detail: d.log },
      );
      const waits = [...d.log().matchAll(/"retryInMs":(\d+)/g)].map((m) => Number(m[1]));
      expect(Math.min(...waits)).toBeGreaterThanOrEqual(30_000);
      expect(sim.stats.passwordGrants).toBe(0);

      setClock(0, ca);
      const setAt = Date.now();
      let grantS: number | undefined;
      await waitFor(
        'a token granted and the device registered',
        () => {
          if (grantS === undefined && sim.stats.passwordGrants > 0) grantS = (Date.now() - setAt) / 1000;
          return sim.devices.length > 0;
        },
        { timeoutMs: 60_000, intervalMs: 50, detail: d.log },
      );
      const registeredS = (Date.now() - setAt) / 1000;
      process.stderr.write(
        `first boot two years ahead, clock set: token granted ${grantS?.toFixed(1)} s and device registered ${registeredS.toFixed(1)} s later (backoffs then at least 30 s)\n`,
      );
      expect(d.log()).toContain('the system clock was set: retrying the device registration now');
      expect(d.log()).toContain('the system clock was set: the token service is asked at the next request');
      // The clock check runs every second; the rest is a loaded machine's slack, far below the 30 s waits.
      expect(registeredS).toBeLessThan(10);
      await d.stop();
    },
  );
});

/**
 * Waits until no upload is in flight and the next try is at least half a second away. The test's
 * setClock changes the clock and the server's certificate at once, which no real platform does: a
 * request that met the old certificate but failed after the change would stamp a new last error
 * with the set clock, and the checks of the old error's stamp would read that one instead.
 */
async function uploadBetweenTries(snapshot: () => Promise<StatusSnapshot | undefined>, log: () => string): Promise<void> {
  await waitFor(
    'the upload between two tries',
    async () => {
      const s = await snapshot();
      const lanes = s?.upload.lanes as { inFlight?: number; backoffUntil?: number } | undefined;
      return s !== undefined && lanes?.inFlight === 0 && lanes.backoffUntil !== undefined && lanes.backoffUntil - s.takenAt > 500;
    },
    { timeoutMs: 60_000, detail: log },
  );
}

/** A receiver on the pty whose GNSS time is the real time: each epoch is written when its second comes. */
function liveReceiver(input: string): { stop(): void } {
  const startMs = Math.floor(Date.now() / 1000) * 1000;
  const epochs = driveText(generateDrive({ minutes: 10, hz: 1, startTimeMs: startMs, seed: 5 })).split(/(?=\$G[PN]RMC)/);
  const fd = openSync(input, 'w');
  let next = 0;
  const timer = setInterval(() => {
    while (next < epochs.length && startMs + next * 1000 <= Date.now()) writeSync(fd, epochs[next++]!);
  }, 100);
  return {
    stop: () => {
      clearInterval(timer);
      closeSync(fd);
    },
  };
}

/** The agent in this process: its log as text, and its clean stop. */
interface RunningAgent {
  log(): string;
  stop(): Promise<void>;
}

/**
 * The simulator over TLS h2 serving `first` (a certificate outside its dates by the real clock), a
 * live receiver on a pty, and the agent's configuration; `start` runs an agent whose injected clock
 * is the system's with its wall time offset by `offsetMs`, `setClock` moves the offset and swaps
 * the certificate.
 */
async function setUp(
  offsetMs: number,
  first: 'expired' | 'future',
  backoff: UploadBackoff = { minBackoffMs: 200, maxBackoffMs: 1000 },
  /** The platform's retry waits over the e2e daemons' (AgentOptions.tuning). */
  platform: Partial<PlatformTuning> = {},
) {
  const dir = tempDir('ta-clock-');
  const caDir = tempDir('ta-ca-');
  const ca = makeThrowawayCa(caDir);
  const expired = issueServerCertificate(caDir, 'expired', -1);
  const future = issueServerCertificate(caDir, 'future', 30, 3650);
  const sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'pw' }] });
  const urls = await sim.start({ tls: { ...(first === 'expired' ? expired : future), protocols: 'h2' } });
  onTestFinished(() => sim.stop());
  const pty = await ptyPair(dir);
  onTestFinished(() => pty.stop());
  const feeder = liveReceiver(pty.input);
  onTestFinished(() => feeder.stop());

  let offset = offsetMs;
  const clock: Clock = { monotonicMs: () => systemClock.monotonicMs(), wallMs: () => systemClock.wallMs() + offset };
  const config = writeConfig({
    dir,
    urls,
    gnss: { path: pty.device, baudRate: 115200 },
    platform: { caFile: ca.caFile },
  });
  const socket = path.join(dir, 'status.sock');
  const snapshot = (): Promise<StatusSnapshot | undefined> => requestSnapshot(socket, 2000).catch(() => undefined);
  const start = async (): Promise<RunningAgent> => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(line) } });
    const agent = new Agent({
      config: loadConfig({ path: config }),
      logger,
      clock,
      tuning: { upload: backoff, platform: { ...E2E_TUNING.platform, ...platform } },
    });
    let stopped = false;
    const stop = async (): Promise<void> => {
      if (stopped) return;
      stopped = true;
      await agent.stop();
    };
    onTestFinished(stop);
    await agent.start();
    return { log: () => lines.join(''), stop };
  };
  const setClock = (offsetMs: number, cert: { key: string; cert: string }): void => {
    offset = offsetMs;
    sim.setCertificate(cert);
  };
  return { sim, ca, expired, future, config, start, setClock, snapshot };
}
