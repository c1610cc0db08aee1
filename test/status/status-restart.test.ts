import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PlatformSimulator } from '../../src/sim/index.js';
import { driveText, generateDrive } from '../../src/sim/receiver/index.js';
import { requestSnapshot } from '../../src/status/status-client.js';
import type { StatusSnapshot } from '../../src/status/snapshot.js';
import { CLI } from '../helpers/paths.js';
import { cliEnv, runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/tmp.js';
import { waitFor } from '../helpers/wait.js';
import { startDaemon, writeConfig, type Daemon } from '../e2e/daemon.js';

const HAVE_SCRIPT = spawnSync('sh', ['-c', 'command -v script && command -v timeout']).status === 0;
if (!HAVE_SCRIPT)
  console.warn('status-restart.test.ts: the status --watch terminal check is skipped: script(1) (util-linux) or timeout(1) is missing');
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function start(dir: string, config: string): Daemon {
  const d = startDaemon(dir, config);
  cleanups.push(async () => {
    if (d.child.exitCode === null && d.child.signalCode === null) {
      d.child.kill('SIGTERM');
      await d.exited;
    }
  });
  return d;
}

describe('status right after a restart', () => {
  it('shows the last success and the token from the database, a whole-second uptime, and --watch fits a small terminal', async () => {
    const dir = tempDir();
    const sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'pw' }] });
    const urls = await sim.start();
    cleanups.push(() => sim.stop());
    const replayFile = path.join(dir, 'drive.nmea');
    writeFileSync(replayFile, driveText(generateDrive({ minutes: 1, hz: 1, seed: 6 })));
    const config = writeConfig({ dir, urls, gnss: { replayFile, replaySpeed: 10 } });
    const socket = path.join(dir, 'status.sock');
    const first = start(dir, config);
    await waitFor(
      'deliveries',
      async () => sim.events.size > 5 && (await requestSnapshot(socket, 2000).catch(() => undefined))?.upload.lastSuccessAt !== undefined,
      {
        timeoutMs: 60_000,
        detail: first.log,
      },
    );
    first.child.kill('SIGTERM');
    expect((await first.exited).code).toBe(0);
    await sim.stop(); // nothing can be delivered after the restart: what status shows comes from before

    const second = start(dir, config);
    await waitFor(
      'the restarted daemon',
      () =>
        requestSnapshot(socket, 2000).then(
          () => true,
          () => false,
        ),
      { timeoutMs: 60_000, detail: second.log },
    );
    const r = await runCli(['status', '--json', '--config', config]);
    const s = JSON.parse(r.stdout) as StatusSnapshot;
    expect(s.source).toBe('daemon');
    expect(s.upload.lastSuccessAt).toBeGreaterThan(Date.now() - 120_000);
    expect(s.token?.state).not.toBe('none');
    expect(s.token?.ageS).toBeGreaterThanOrEqual(0);
    expect(Number.isInteger(s.daemon.uptimeS)).toBe(true);
    const human = await runCli(['status', '--config', config]);
    expect(human.stdout).not.toMatch(/last success never/);

    if (!HAVE_SCRIPT) return;
    // A 12 x 60 terminal: every frame at most 11 lines of at most 60 columns, so nothing scrolls.
    const watch = spawnSync(
      'script',
      ['-qfec', `stty rows 12 cols 60; exec timeout -s TERM 3 ${process.execPath} ${CLI} status --watch --config ${config}`, '/dev/null'],
      { env: cliEnv({ TERM: 'xterm' }), encoding: 'utf8', timeout: 30_000 },
    );
    const frames = watch.stdout.split('\u001b[H').slice(1);
    expect(frames.length, watch.stdout + watch.stderr).toBeGreaterThanOrEqual(2);
    for (const frame of frames) {
      const lines = frame
        .replace(/\u001b\[J[\s\S]*$/, '')
        .replace(/\r/g, '')
        .split('\n')
        .slice(0, -1)
        .map((l) => l.replace(/\u001b\[[0-9;]*[mK]/g, ''));
      expect(lines.length).toBeLessThanOrEqual(11);
      for (const l of lines) expect([...l].length, l).toBeLessThanOrEqual(60);
    }
  });
});
