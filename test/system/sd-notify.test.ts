import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { SdNotify } from '../../src/system/sd-notify.js';
import { tempDir } from '../helpers/tmp.js';
import { waitFor } from '../helpers/wait.js';

const have = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
const canRun = have('socat') && have('systemd-notify');
if (!canRun) process.stderr.write('skipping sd_notify delivery test: socat or systemd-notify is missing\n');

/** A datagram receiver on a real unix socket (socat), collecting what arrives. */
async function receiver(dir: string) {
  const sock = path.join(dir, 'notify.sock');
  const out = path.join(dir, 'received');
  const child = spawn('sh', ['-c', `exec socat -u UNIX-RECV:${sock},unlink-early OPEN:${out},creat,append`], { stdio: 'ignore' });
  await waitFor('the notify socket', () => existsSync(sock));
  return {
    sock,
    read: () => (existsSync(out) ? readFileSync(out, 'utf8') : ''),
    stop: () => child.kill(),
  };
}

describe('sd_notify', () => {
  it('is a no-op without NOTIFY_SOCKET', async () => {
    const n = new SdNotify({ env: {}, logger: silentLogger(), command: '/nonexistent/helper' });
    expect(n.enabled).toBe(false);
    n.ready();
    await n.flush();
    expect(n.watchdogIntervalMs()).toBeUndefined();
  });

  it('derives the watchdog interval from WATCHDOG_USEC and WATCHDOG_PID', () => {
    const base = { NOTIFY_SOCKET: '/x' };
    expect(new SdNotify({ env: { ...base, WATCHDOG_USEC: '30000000' }, logger: silentLogger() }).watchdogIntervalMs()).toBe(15_000);
    expect(
      new SdNotify({
        env: { ...base, WATCHDOG_USEC: '30000000', WATCHDOG_PID: String(process.pid) },
        logger: silentLogger(),
      }).watchdogIntervalMs(),
    ).toBe(15_000);
    expect(
      new SdNotify({ env: { ...base, WATCHDOG_USEC: '30000000', WATCHDOG_PID: '1' }, logger: silentLogger() }).watchdogIntervalMs(),
    ).toBeUndefined();
    expect(new SdNotify({ env: { WATCHDOG_USEC: '30000000' }, logger: silentLogger() }).watchdogIntervalMs()).toBeUndefined();
  });

  it('survives a missing helper', async () => {
    const n = new SdNotify({ env: { NOTIFY_SOCKET: '/tmp/none.sock' }, logger: silentLogger(), command: '/nonexistent/systemd-notify' });
    n.ready();
    await n.flush();
  });

  it.skipIf(!canRun)('delivers READY=1, WATCHDOG=1 and STOPPING=1 as datagrams to NOTIFY_SOCKET', async () => {
    const r = await receiver(tempDir());
    try {
      // The helper's default 10 s before it is killed: three spawned at once on a loaded machine may need more than 3 s.
      const n = new SdNotify({ env: { NOTIFY_SOCKET: r.sock, PATH: process.env.PATH }, logger: silentLogger() });
      n.ready('recording');
      n.watchdog();
      n.stopping();
      await waitFor('the three notifications', () => ['READY=1', 'WATCHDOG=1', 'STOPPING=1'].every((m) => r.read().includes(m)), {
        timeoutMs: 20_000,
      });
      const got = r.read();
      expect(got).toContain('READY=1');
      expect(got).toContain('STATUS=recording');
      expect(got).toContain('WATCHDOG=1');
      expect(got).toContain('STOPPING=1');
      await n.flush(5000);
    } finally {
      r.stop();
    }
  });
});
