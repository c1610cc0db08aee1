/**
 * The real gpsd for tests (Debian's gpsd and gpsd-clients; .ci/run installs them): `gpsfake`
 * feeding a log through a real gpsd, or `gpsd` alone on a device (a socat pty). Each runs in its
 * own process group on a free loopback port and is killed, group and all, when the test ends.
 * Where gpsd or gpsfake is missing, HAVE_GPSD is false and the tests skip with one line.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { onTestFinished } from 'vitest';

function have(cmd: string): boolean {
  return spawnSync('sh', ['-c', `PATH="$PATH:/usr/sbin:/sbin" command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

export const HAVE_GPSD = have('gpsd') && have('gpsfake');
if (!HAVE_GPSD) console.warn('gpsd tests: gpsd or gpsfake is not installed (apt-get install gpsd gpsd-clients); skipped');

export interface Spawned {
  child: ChildProcess;
  exited: Promise<void>;
  /** stderr so far (for failure messages). */
  log(): string;
  /** SIGTERM to the group, SIGKILL after a second; resolves once the leader is gone. */
  kill(): Promise<void>;
}

function spawnGroup(cmd: string, args: string[]): Spawned {
  // gpsfake leaves gpsd's control socket (gpsfake-PID.sock) in TMPDIR: each gets its own, removed after.
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'ta-gpsd-run-'));
  const child = spawn(cmd, args, {
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
    env: { ...process.env, TMPDIR: tmp, PATH: `${process.env.PATH}:/usr/sbin:/sbin` },
  });
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const signal = (sig: NodeJS.Signals) => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, sig);
    } catch {
      // already gone
    }
  };
  const kill = async () => {
    signal('SIGTERM');
    // gpsfake can hang in its cleanup after SIGTERM; the group goes with SIGKILL then.
    const t = setTimeout(() => signal('SIGKILL'), 1000);
    await exited;
    clearTimeout(t);
    signal('SIGKILL');
  };
  onTestFinished(async () => {
    await kill();
    rmSync(tmp, { recursive: true, force: true });
  });
  return { child, exited, log: () => err, kill };
}

/**
 * gpsfake feeding `log` once through a fresh gpsd on `port`. In pipe mode gpsfake waits 1.4 s
 * after gpsd has the device before it feeds, which is when a test's client connects and watches;
 * `-W 1` ends it (and its gpsd, so the client sees the connection close) a second after the log.
 */
export function startGpsfake(log: string, port: number): Spawned {
  return spawnGroup('gpsfake', ['-1', '-p', '-q', '-W', '1', '-P', String(port), '-r', '?WATCH={"enable":false}', log]);
}

/**
 * gpsd itself on `device` (read-only, no waiting for clients, in the foreground). Without a device
 * it needs a control socket (`control`), where receivers could be added later, or it will not run.
 */
export function startGpsd(device: string | undefined, port: number, control?: string): Spawned {
  return spawnGroup('gpsd', [
    '-N',
    '-n',
    '-b',
    '-S',
    String(port),
    ...(control !== undefined ? ['-F', control] : []),
    ...(device !== undefined ? [device] : []),
  ]);
}
