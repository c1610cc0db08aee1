import { lstatSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { requestSnapshot } from '../../src/status/status-client.js';
import { HAVE_SOCAT, startDaemon, startPtyDaemon, stopWhenFinished } from './daemon.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait.js';

if (!HAVE_SOCAT) process.stderr.write('skipping the one-agent-per-dataDir e2e: socat is missing (apt-get install socat)\n');

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe.skipIf(!HAVE_SOCAT)('one agent per dataDir, against a real run on a pty receiver', () => {
  it('a second run exits 2 naming the first one and leaves its socket alone; after a SIGKILL the lock is free again', async () => {
    const { dir, daemon, configFile, socket } = await startPtyDaemon(cleanups);
    const before = lstatSync(socket).ino;
    const pid = daemon.child.pid!;

    const second = await runCli(['run', '--config', configFile], { timeoutMs: 30_000 });
    expect(second.code, second.stderr).toBe(2);
    expect(second.stderr.trim()).toBe(`telematics-agent: another agent is running on ${path.join(dir, 'data')} (pid ${pid})`);
    expect(second.stdout).toBe(''); // it never got as far as a log line

    // The running daemon still owns its socket: same file, still answering as itself.
    expect(lstatSync(socket).ino).toBe(before);
    const snap = await requestSnapshot(socket, 10_000);
    expect(snap.daemon.pid).toBe(pid);
    const status = await runCli(['status', '--json', '--config', configFile]);
    expect((JSON.parse(status.stdout) as { daemon: { running: boolean; pid: number } }).daemon).toMatchObject({ running: true, pid });

    // A SIGKILL leaves no stale lock: the kernel released it with the process.
    daemon.child.kill('SIGKILL');
    await daemon.exited;
    const third = startDaemon(dir, configFile);
    stopWhenFinished(third);
    await waitFor(
      'the new daemon on the same dataDir',
      async () => (await requestSnapshot(socket, 2000).catch(() => undefined))?.daemon.pid === third.child.pid,
      { timeoutMs: 60_000, detail: third.log },
    );
    third.child.kill('SIGTERM');
    expect(await third.exited).toEqual({ code: 0, signal: null });
  });
});
