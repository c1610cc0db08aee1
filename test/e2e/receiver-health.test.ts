import { appendFileSync } from 'node:fs';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { StatusSnapshot } from '../../src/status/snapshot.js';
import { requestSnapshot } from '../../src/status/status-client.js';
import { generateDrive } from '../../src/sim/receiver/index.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait.js';
import { HAVE_SOCAT, startPtyDaemon } from './daemon.js';

if (!HAVE_SOCAT) process.stderr.write('skipping receiver health e2e: socat is missing (apt-get install socat)\n');

/**
 * The receiver's health through the real daemon, fed on a pty as a u-blox receiver feeds it: its
 * ANTSTATUS notices and GSV signal strengths reach `status` (the socket's snapshot and the screen),
 * an open antenna makes it DEGRADED with the fix and fails doctor's antenna check, and the log says each change once.
 */
describe.skipIf(!HAVE_SOCAT)('receiver health e2e', () => {
  it('antenna OK then OPEN: status shows it with the signal, DEGRADED with the fix, one log line a change', async () => {
    const cleanups: (() => Promise<void> | void)[] = [];
    onTestFinished(async () => {
      for (const c of cleanups.reverse()) await c();
    });
    const { pty, socket, configFile, daemon } = await startPtyDaemon(cleanups);
    const drive = generateDrive({
      minutes: 2,
      seed: 2,
      antenna: [
        { atS: 0, state: 'OK' },
        { atS: 60, state: 'OPEN' },
      ],
    });
    const open = drive.lines.findIndex((l) => l.includes('ANTSTATUS=OPEN'));
    expect(open).toBeGreaterThan(0);
    const send = (lines: string[]): void => appendFileSync(pty.input, lines.map((l) => `${l}\r\n`).join(''));
    const health = async (): Promise<NonNullable<StatusSnapshot['receiver']>['health']> =>
      (await requestSnapshot(socket, 2000).catch(() => undefined))?.receiver?.health;

    send(drive.lines.slice(0, open));
    await waitFor(
      'antenna OK with a signal',
      async () => {
        const h = await health();
        return h?.antenna === 'OK' && (h.signal.topMeanDbHz ?? 0) > 30;
      },
      { timeoutMs: 30_000, detail: daemon.log },
    );
    const ok = await runCli(['status', '--config', configFile]);
    expect(ok.stdout).toMatch(/^receiver\s+antenna OK {2}C\/N0 \d+ dB-Hz \(top 4\)/m);
    const doctorOk = await runCli(['doctor', '--config', configFile]);
    expect(doctorOk.stdout).toMatch(/^PASS\s+antenna\s+the receiver reports the antenna OK \(from the running agent\)/m);
    expect(doctorOk.stdout).toMatch(/^PASS\s+jamming\s+none suspected, C\/N0 \d+ dB-Hz \(top 4\)/m);

    send(drive.lines.slice(open));
    await waitFor('antenna OPEN', async () => (await health())?.antenna === 'OPEN', { timeoutMs: 30_000, detail: daemon.log });
    const json = JSON.parse((await runCli(['status', '--json', '--config', configFile])).stdout) as {
      health: { level: string; reasons: string[] };
    };
    expect(json.health.level).toBe('degraded');
    expect(json.health.reasons).toContainEqual(expect.stringMatching(/GNSS antenna open.*check the antenna cable/));
    const screen = await runCli(['status', '--config', configFile]);
    expect(screen.stdout).toMatch(/^receiver\s+antenna OPEN/m);
    expect(screen.stdout).toMatch(/DEGRADED/);
    // doctor beside the daemon takes the receiver from its status socket, antenna and jamming included.
    const doctor = await runCli(['doctor', '--config', configFile]);
    expect(doctor.stdout).toMatch(/^FAIL\s+antenna\s+the receiver reports the antenna open \(from the running agent\)/m);
    expect(doctor.stdout).toMatch(/fix: no antenna current: check the antenna cable/);
    // The simulated open antenna gives no signal at all: no C/N0 to judge jamming by.
    expect(doctor.stdout).toMatch(/^SKIP\s+jamming\s+no C\/N0 to judge by/m);
    // Each state said once in the log, though the receiver repeats nothing and the GSV goes on.
    expect(daemon.log().match(/GNSS antenna OK/g)).toHaveLength(1);
    expect(daemon.log().match(/GNSS antenna open/g)).toHaveLength(1);
  }, 90_000);
});
