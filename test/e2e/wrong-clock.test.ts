import { closeSync, openSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { PlatformSimulator } from '../../src/sim/index.js';
import { driveText, generateDrive } from '../../src/sim/receiver/index.js';
import { issueServerCertificate, makeThrowawayCa } from '../../src/sim/throwaway-ca.js';
import { requestSnapshot } from '../../src/socket/status-client.js';
import type { StatusSnapshot } from '../../src/status/snapshot.js';
import { WALL_OFFSET_FILE_ENV } from '../../src/system/wall-clock-seam.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/tmp.js';
import { waitFor } from '../helpers/wait.js';
import { HAVE_SOCAT, ptyPair, startDaemon, writeConfig, type Daemon } from './daemon.js';

if (!HAVE_SOCAT) process.stderr.write('skipping the wrong-clock e2e: socat is missing (apt-get install socat)\n');

const TWO_YEARS_MS = 730 * 86_400_000;

/**
 * Issue 22.8 through the real daemon: a gateway whose clock is two years ahead (a bad RTC) boots,
 * reads a live receiver on a pty (GNSS time = the real time), and meets the platform over TLS. CI
 * cannot move the system clock, so the daemon's wall clock is offset through its test seam
 * (src/system/wall-clock-seam.ts), and the simulator serves a certificate outside its dates by
 * the real clock, as a valid one is by a clock two years ahead (TLS judges by the real clock).
 * Then the clock is "set" (offset 0, and the simulator serves a valid certificate): delivery
 * resumes, and status measures its ages on the monotonic clock across the step.
 */
describe.skipIf(!HAVE_SOCAT)('a wrong system clock on the real daemon (issue 22.8)', () => {
  it('names the clock and by how much, says FAILING, and ages stay true across the clock being set', { timeout: 180_000 }, async () => {
    const dir = tempDir('ta-clock-');
    const caDir = tempDir('ta-ca-');
    const ca = makeThrowawayCa(caDir);
    const expired = issueServerCertificate(caDir, 'expired', -1);
    const sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'pw' }] });
    const urls = await sim.start({ tls: { key: expired.key, cert: expired.cert, protocols: 'h2' } });
    onTestFinished(() => sim.stop());
    const pty = await ptyPair(dir);
    onTestFinished(() => pty.stop());
    const feeder = liveReceiver(pty.input);
    onTestFinished(() => feeder.stop());

    const offsetFile = path.join(dir, 'wall-offset');
    writeFileSync(offsetFile, String(TWO_YEARS_MS));
    const config = writeConfig({
      dir,
      urls,
      gnss: { path: pty.device, baudRate: 115200 },
      platform: { caFile: ca.caFile },
      upload: { minBackoffMs: 200, maxBackoffMs: 1000 },
    });
    const socket = path.join(dir, 'status.sock');
    const snapshot = (): Promise<StatusSnapshot | undefined> => requestSnapshot(socket, 2000).catch(() => undefined);
    const start = (): Daemon => {
      const d = startDaemon(dir, config, { [WALL_OFFSET_FILE_ENV]: offsetFile });
      onTestFinished(async () => {
        if (d.child.exitCode === null && d.child.signalCode === null) {
          d.child.kill('SIGKILL');
          await d.exited;
        }
      });
      return d;
    };
    const setClock = (offsetMs: number, cert: { key: string; cert: string }): void => {
      writeFileSync(offsetFile, String(offsetMs));
      sim.setCertificate(cert);
    };

    // 1. First boot, two years ahead: the token and the registration fail on the certificate's dates.
    let d = start();
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
    d.child.kill('SIGTERM');
    expect((await d.exited).code, d.log().slice(-2000)).toBe(0);

    // 3. The next boot is two years ahead again (the RTC lost it): now the upload meets TLS, and its
    //    error carries a wall stamp two years in the future.
    setClock(TWO_YEARS_MS, expired);
    d = start();
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
    d.child.kill('SIGTERM');
    expect((await d.exited).code, d.log().slice(-2000)).toBe(0);
  });
});

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
