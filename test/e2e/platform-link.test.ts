import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PlatformSimulator } from '../../src/sim/index.js';
import { driveText, generateDrive } from '../../src/sim/receiver/index.js';
import { runCli } from '../helpers/run-cli.js';
import { freePort } from '../helpers/ports.js';
import { waitFor } from '../helpers/wait.js';
import { startDaemon, writeConfig, stopWhenFinished } from './daemon.js';

/**
 * The platform link through the real daemon: a parked vehicle whose outbox is empty is HEALTHY while the
 * platform answers, and DEGRADED, with what failed and since when, once an attempt fails, although
 * no fix waits. The attempt here is the token renewal: the simulator gives tokens of 60 s (the
 * agent's floor), so the agent renews at 54 s, at its next minute's look, while nothing is queued.
 */
interface StatusJson {
  outbox: { pending: number; sentTotal?: number };
  platform?: { lastAnswerAgeS?: number; failing?: { message: string }; expectedIntervalS?: number };
  health: { level: string; reasons: string[] };
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('status and doctor see the platform link, not only the outbox', () => {
  it('HEALTHY while the platform answers, DEGRADED with the cause and since when once a token renewal fails, outbox empty', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ta-e2e-link-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'pw' }], accessTtlS: 60 });
    // Stopped later while the daemon keeps connecting to its port: one outside the ephemeral range,
    // which no connection of the machine can be handed as its own (a connect to itself is no ECONNREFUSED).
    const urls = await sim.start({ port: await freePort() });
    let simUp = true;
    cleanups.push(async () => {
      if (simUp) await sim.stop();
    });
    const drive = path.join(dir, 'drive.nmea');
    writeFileSync(drive, driveText(generateDrive({ minutes: 1, seed: 23 })));
    const configFile = writeConfig({ dir, urls, gnss: { replayFile: drive, replaySpeed: 0 } });
    const daemon = startDaemon(dir, configFile);
    stopWhenFinished(daemon);
    const status = async (): Promise<{ code: number | null; json: StatusJson | undefined; text: string }> => {
      const r = await runCli(['status', '--json', '--config', configFile]);
      let json: StatusJson | undefined;
      try {
        json = JSON.parse(r.stdout) as StatusJson;
      } catch {
        json = undefined;
      }
      return { code: r.code, json, text: r.stdout + r.stderr };
    };

    // The replay delivered and ended: parked, nothing queued, the platform answering.
    let last: Awaited<ReturnType<typeof status>> | undefined;
    await waitFor(
      'every fix delivered and status HEALTHY',
      async () => {
        last = await status();
        return last.code === 0 && last.json?.outbox.pending === 0 && (last.json.outbox.sentTotal ?? 0) > 0;
      },
      { timeoutMs: 45_000, intervalMs: 500, detail: () => `${last?.text ?? ''}\n${daemon.log()}` },
    );
    expect(last?.json?.platform?.lastAnswerAgeS).toBeDefined();
    expect(last?.json?.platform?.failing).toBeUndefined();
    // Tokens of 60 s renew 54 s after receipt: that, plus the margin for a late look and a slow answer.
    expect(last?.json?.platform?.expectedIntervalS).toBe(54 + 120 + 5);

    await sim.stop();
    simUp = false;
    await waitFor(
      'status DEGRADED because the token renewal found no platform',
      async () => {
        last = await status();
        // Exit 1 with the snapshot: a status run that failed on its own (no JSON) is not the answer.
        return last.code === 1 && last.json !== undefined;
      },
      { timeoutMs: 150_000, intervalMs: 1000, detail: () => `${last?.text ?? ''}\n${daemon.log()}` },
    );
    const json = last?.json;
    expect(json?.outbox.pending).toBe(0);
    expect(json?.health.level).toBe('degraded');
    // The token's 60 s may run out before the next look: "token expired" is then true as well.
    expect(json?.health.reasons.filter((r) => r !== 'token expired')).toEqual([
      expect.stringMatching(
        /^platform not answering for \d+ (s|min) \(since \d\d:\d\d:\d\d UTC\): token refresh: 127\.0\.0\.1:\d+ unreachable \(ECONNREFUSED\)$/,
      ),
    ]);

    // The technician's screen says it too, and so does doctor beside the daemon.
    const screen = await runCli(['status', '--config', configFile]);
    expect(screen.code).toBe(1);
    expect(screen.stdout).toMatch(/DEGRADED/);
    expect(screen.stdout).toMatch(/^platform  last answer \d+ (s|min) ago  not answering for \d+ (s|min)$/m);
    expect(screen.stdout).toMatch(/^! platform not answering for \d+ (s|min) \(since .*ECONNREFUSED\)$/m);
    const doctor = await runCli(['doctor', '--config', configFile]);
    expect(doctor.stdout).toMatch(
      /^WARN\s+platform link\s+the running agent \(pid \d+\): platform not answering for \d+ (s|min) .*token refresh: .*ECONNREFUSED/m,
    );
  }, 240_000);
});
