import { connect, type Socket } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { requestSnapshot } from '../../src/status/status-client.js';
import { MAX_STATUS_CLIENTS } from '../../src/socket/server.js';
import { waitFor } from '../helpers/wait.js';
import { startReplayDaemon } from './daemon.js';

interface Client {
  socket: Socket;
  received(): string;
  closed: Promise<void>;
  isClosed(): boolean;
}

function open(file: string, request?: string): Promise<Client> {
  return new Promise((resolve, reject) => {
    const socket = connect({ path: file });
    let data = '';
    let closed = false;
    const done = new Promise<void>((r) => socket.once('close', () => r()));
    void done.then(() => (closed = true));
    socket.on('data', (d: Buffer) => (data += d.toString()));
    socket.on('error', () => undefined);
    onTestFinished(() => void socket.destroy());
    socket.once('connect', () => {
      if (request !== undefined) socket.write(`${request}\n`);
      resolve({ socket, received: () => data, closed: done, isClosed: () => closed });
    });
    socket.once('error', reject);
  });
}

/** The real daemon replaying a 10 Hz drive 30 times faster than recorded (about 300 fixes a second). */
async function replayDaemon(): Promise<{ socket: string; log: () => string }> {
  const { socket, daemon } = await startReplayDaemon({ prefix: 'ta-bounds-', drive: { minutes: 10, hz: 10, seed: 4 }, replaySpeed: 30 });
  return { socket, log: daemon.log };
}

describe('the status socket is bounded, on the real daemon', () => {
  it(`holds ${MAX_STATUS_CLIENTS} clients at once, refuses or makes room for more, lets a status request in, and closes idle ones`, async () => {
    const { socket, log } = await replayDaemon();
    const idle = await Promise.all(Array.from({ length: MAX_STATUS_CLIENTS }, () => open(socket)));
    const extra = await Promise.all(Array.from({ length: 4 }, () => open(socket)));
    const all = [...idle, ...extra];
    // Never more than the bound held: each extra is refused with one line (the idle ones are still
    // young) or takes the place of the oldest idle one (closed without a word).
    await waitFor('four connections closed by the daemon', () => all.filter((c) => c.isClosed()).length >= 4, {
      timeoutMs: 4000,
      detail: log,
    });
    for (const c of all.filter((x) => x.isClosed()))
      expect(c.received()).toMatch(/^(|\{"error":\{"code":"TOO_MANY_CLIENTS","message":"[^\n]+"\}\}\n)$/);
    // Held idle connections do not lock a technician out: once they have waited a
    // moment without a request, the oldest gives its place to a client that asks.
    expect((await requestSnapshot(socket, 3000)).source).toBe('daemon');
    // Idle clients (no request line) are closed by the daemon, which then answers again.
    await waitFor('the idle clients closed by the daemon', () => all.every((c) => c.isClosed()), { timeoutMs: 20_000, detail: log });
    const snap = await requestSnapshot(socket, 10_000);
    expect(snap.source).toBe('daemon');
  });

  // Its waits (a daemon start, 3,000 fixes decoded, the drop, the feed) add up past vitest's default 60 s;
  // on a machine shared with other work the replay decodes a tenth of its pace (over 45 s for 3,000).
  it('drops a fix subscriber that does not read, while one that reads keeps its feed', { timeout: 300_000 }, async () => {
    const { socket, log } = await replayDaemon();
    const reader = await open(socket, '{"subscribe":"fixes"}');
    const stuck = await open(socket, '{"subscribe":"fixes"}');
    stuck.socket.pause();
    // A daemon decoding 300 fixes a second for two subscribers on a loaded machine: more than the default second.
    const start = (await requestSnapshot(socket, 10_000)).receiver?.fixesRead ?? 0;
    // 3,000 fix lines are about a megabyte: far past the kernel's socket buffer and the daemon's queue.
    await waitFor(
      '3000 more fixes decoded',
      async () => ((await requestSnapshot(socket, 1000).catch(() => undefined))?.receiver?.fixesRead ?? 0) > start + 3000,
      { timeoutMs: 180_000, detail: log },
    );
    stuck.socket.resume();
    await Promise.race([
      stuck.closed,
      new Promise((_, reject) => setTimeout(() => reject(new Error('the stuck subscriber was never dropped')), 10_000)),
    ]);
    const stuckBytes = stuck.received().length;
    const readerBytes = reader.received().length;
    expect(stuckBytes).toBeLessThan(readerBytes / 2);
    // What was already in the kernel's socket buffer (about 50 KB here), not the daemon's queue:
    // the daemon destroyed the connection and freed what it had queued (64 KiB at most).
    expect(stuckBytes).toBeLessThan(160 * 1024);
    expect(reader.isClosed()).toBe(false);
    const before = reader.received().length;
    await waitFor('the reader still fed', () => reader.received().length > before, { timeoutMs: 10_000 });
  });
});
