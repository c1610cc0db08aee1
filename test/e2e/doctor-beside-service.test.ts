import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PlatformSimulator } from '../../src/sim/index.js';
import { driveText, generateDrive } from '../../src/sim/receiver/index.js';
import { requestSnapshot } from '../../src/status/status-client.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/tmp.js';
import { waitFor } from '../helpers/wait.js';
import { DEVICE, HAVE_SOCAT, startPtyDaemon, writeConfig } from './daemon.js';

if (!HAVE_SOCAT) process.stderr.write('skipping doctor beside the service: socat is missing (apt-get install socat)\n');

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Writes one epoch every `tickMs` into the pty until stopped. */
function feedSlowly(input: string, text: string, tickMs: number): { stop(): Promise<void> } {
  const epochs = text.split(/(?=\$G[PN]RMC)/);
  let stopped = false;
  const done = (async () => {
    const fd = openSync(input, 'w');
    try {
      for (const e of epochs) {
        if (stopped) break;
        writeSync(fd, e);
        await new Promise((r) => setTimeout(r, tickMs));
      }
    } finally {
      closeSync(fd);
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await done;
    },
  };
}

const line = (out: string, name: string): string =>
  out.split('\n').find((l) => new RegExp(`^\\w{4}\\s+${name}\\b`).test(l)) ?? `(no ${name} line)`;

describe.skipIf(!HAVE_SOCAT)('doctor beside the running service', () => {
  it('takes the receiver facts and the registration from the running daemon instead of opening its port', async () => {
    const { daemon, pty, configFile, socket } = await startPtyDaemon(cleanups);
    const feed = feedSlowly(pty.input, driveText(generateDrive({ minutes: 5, hz: 1, seed: 8 })), 100);
    cleanups.push(() => feed.stop());
    await waitFor(
      'a fix and a registration in the daemon',
      async () => {
        const s = await requestSnapshot(socket, 1000).catch(() => undefined);
        return (s?.receiver?.mode ?? 0) >= 2 && s?.registration.deviceUUID !== undefined;
      },
      { timeoutMs: 60_000, detail: daemon.log },
    );
    // Generous: the daemon may be slow to answer on a loaded machine, and a miss here is not retried.
    const deviceUUID = (await requestSnapshot(socket, 10_000)).registration.deviceUUID!;
    const r = await runCli(['doctor', '--config', configFile]);
    expect(r.stdout).not.toMatch(/lock port|stop the service/i);
    expect(line(r.stdout, 'NMEA')).toMatch(new RegExp(`^PASS\\s+NMEA\\s+the running agent \\(pid ${daemon.child.pid}\\) reads /dev/`));
    expect(line(r.stdout, 'fix')).toMatch(/^PASS\s+fix\s+[23]D fix, \d+ satellites, HDOP [\d.]+ \(from the running agent\)/);
    expect(line(r.stdout, 'device registered')).toMatch(
      new RegExp(`^PASS\\s+device registered\\s+deviceUUID ${deviceUUID} \\(from the running agent\\)`),
    );
    // The daemon still reads the receiver: doctor did not take the port.
    const before = (await requestSnapshot(socket, 10_000)).receiver?.lines ?? 0;
    await waitFor(
      'more lines read by the daemon',
      async () => ((await requestSnapshot(socket, 1000).catch(() => undefined))?.receiver?.lines ?? 0) > before,
      { timeoutMs: 30_000, detail: daemon.log },
    );
  });

  it('makes no password grant while the agent holds a valid token (running or stopped); --test-password makes one', async () => {
    const { daemon, pty, configFile, socket, sim } = await startPtyDaemon(cleanups);
    const feed = feedSlowly(pty.input, driveText(generateDrive({ minutes: 5, hz: 1, seed: 9 })), 100);
    cleanups.push(() => feed.stop());
    await waitFor(
      'a valid token and a registration in the daemon',
      async () => {
        const s = await requestSnapshot(socket, 1000).catch(() => undefined);
        return s?.token?.state === 'valid' && s.registration.deviceUUID !== undefined;
      },
      { timeoutMs: 60_000, detail: daemon.log },
    );
    const grants = sim.stats.passwordGrants;
    for (let i = 0; i < 2; i++) {
      const r = await runCli(['doctor', '--config', configFile]);
      expect(line(r.stdout, 'credentials')).toMatch(
        new RegExp(
          `^PASS\\s+credentials\\s+the running agent \\(pid ${daemon.child.pid}\\) holds a valid token, \\d+ s old; the password was not tried \\(doctor --test-password tries it\\)$`,
        ),
      );
    }
    expect(sim.stats.passwordGrants).toBe(grants);
    const tested = await runCli(['doctor', '--test-password', '--config', configFile]);
    expect(line(tested.stdout, 'credentials')).toMatch(
      /^PASS\s+credentials\s+the token service accepted the password \(one password grant\)$/,
    );
    expect(sim.stats.passwordGrants).toBe(grants + 1);

    // The service stopped: its stored pair still shows the credentials working.
    await feed.stop();
    daemon.child.kill('SIGTERM');
    await daemon.exited;
    const stopped = await runCli(['doctor', '--config', configFile]);
    expect(line(stopped.stdout, 'credentials')).toMatch(
      /^PASS\s+credentials\s+the stored token is valid, \d+ s old; the password was not tried/,
    );
    expect(line(stopped.stdout, 'device registered')).toMatch(/^PASS\s+device registered\s+deviceUUID \S+ \(from the database\)/);
    expect(sim.stats.passwordGrants).toBe(grants + 1);
  });

  it('before the first start: a missing dataDir will be created, a replay log is no clock finding, the platform says whether the device exists', async () => {
    const dir = tempDir();
    const sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'pw' }] });
    const urls = await sim.start();
    cleanups.push(() => sim.stop());
    const replayFile = path.join(dir, 'old-drive.nmea');
    // A drive recorded long ago: its GNSS times are nowhere near the system clock.
    writeFileSync(replayFile, driveText(generateDrive({ minutes: 1, hz: 1, startTimeMs: Date.UTC(2024, 0, 5, 8) })));
    const configFile = writeConfig({ dir, urls, gnss: { replayFile } });
    const fresh = await runCli(['doctor', '--config', configFile]);
    expect(line(fresh.stdout, 'disk space')).toMatch(
      new RegExp(`^PASS\\s+disk space\\s+\\d+ MiB free in .* \\(${path.join(dir, 'data')} will be created at the first start\\)`),
    );
    expect(line(fresh.stdout, 'clock vs GNSS')).toMatch(/^SKIP\s+clock vs GNSS\s+a replayed log/);
    expect(line(fresh.stdout, 'device registered')).toMatch(
      /^WARN\s+device registered\s+not registered yet \(the platform does not know this device\)/,
    );
    expect(fresh.code, fresh.stdout).toBe(0);

    // Registered from another gateway's data (or the database lost): the platform knows it.
    const other = path.join(dir, 'other');
    mkdirSync(other);
    const otherConfig = writeConfig({ dir: other, urls, gnss: { replayFile } });
    expect((await runCli(['register', '--config', otherConfig])).code).toBe(0);
    const known = await runCli(['doctor', '--config', configFile]);
    expect(line(known.stdout, 'device registered')).toMatch(
      new RegExp(
        `^PASS\\s+device registered\\s+deviceUUID ${sim.devices.find((d) => d.externalDeviceId === DEVICE.externalDeviceId)?.deviceUUID} \\(from the platform\\)`,
      ),
    );
  });
});
