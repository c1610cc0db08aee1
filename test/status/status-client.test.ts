import { createServer, type Socket } from 'node:net';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { requestSnapshot } from '../../src/status/status-client.js';
import { tempDir } from '../helpers/tmp.js';

/**
 * What `status` makes of each way the daemon's socket can answer (the client's side of issue
 * 22.1): an answer, "busy: ask again" (closed without a word, TOO_MANY_CLIENTS), and the final
 * failures. A scripted server on a real unix socket plays the daemon, one behaviour per connection.
 */
type Behaviour = (socket: Socket) => void;

const SNAPSHOT = { version: 1, source: 'daemon' };
const answer =
  (text: string): Behaviour =>
  (s) =>
    s.once('data', () => s.end(text));
const closeAtOnce: Behaviour = (s) => s.destroy();
const silent: Behaviour = () => undefined;

async function daemon(behaviours: Behaviour[], otherwise: Behaviour = silent): Promise<{ socketPath: string; connections(): number }> {
  const socketPath = path.join(tempDir('ta-client-'), 'status.sock');
  const open = new Set<Socket>();
  let n = 0;
  const server = createServer((s) => {
    open.add(s);
    s.on('error', () => undefined);
    s.once('close', () => open.delete(s));
    (behaviours[n++] ?? otherwise)(s);
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  );
  return { socketPath, connections: () => n };
}

async function failure(socketPath: string, timeoutMs: number): Promise<{ code?: string; message: string }> {
  return requestSnapshot(socketPath, timeoutMs).then(
    () => {
      throw new Error('requestSnapshot answered');
    },
    (e: { code?: string; message: string }) => e,
  );
}

describe('requestSnapshot: the status client', () => {
  it('returns the snapshot of the answer line', async () => {
    const d = await daemon([answer(`${JSON.stringify({ status: SNAPSHOT })}\n`)]);
    expect(await requestSnapshot(d.socketPath, 2000)).toEqual(SNAPSHOT);
  });

  it('an answer cut off before its newline is still read', async () => {
    const d = await daemon([answer(JSON.stringify({ status: SNAPSHOT }))]);
    expect(await requestSnapshot(d.socketPath, 2000)).toEqual(SNAPSHOT);
  });

  it('asks again when the daemon is busy: closed without a word, or TOO_MANY_CLIENTS', async () => {
    const busy = `${JSON.stringify({ error: { code: 'TOO_MANY_CLIENTS', message: 'queue full' } })}\n`;
    const d = await daemon([closeAtOnce, answer(busy), closeAtOnce, answer(`${JSON.stringify({ status: SNAPSHOT })}\n`)]);
    expect(await requestSnapshot(d.socketPath, 10_000)).toEqual(SNAPSHOT);
    expect(d.connections()).toBe(4);
  });

  it('a daemon busy until the timeout: TOO_MANY_CLIENTS', async () => {
    const d = await daemon([], closeAtOnce);
    // Long enough for a second attempt even when a loaded machine stalls this process (client and
    // server both) through the first one: 300 ms was sometimes all spent before the first close.
    const e = await failure(d.socketPath, 2000);
    expect(e.code === 'TOO_MANY_CLIENTS' || e.code === 'DAEMON_SOCKET_ERROR', e.message).toBe(true);
    expect(d.connections()).toBeGreaterThan(1);
  });

  it('busy, then the time left runs out in the next attempt: still TOO_MANY_CLIENTS, not "did not answer"', async () => {
    const busy = `${JSON.stringify({ error: { code: 'TOO_MANY_CLIENTS', message: 'queue full' } })}\n`;
    // The next connection is held without a word: the attempt ends by the deadline, as a retry
    // started with a few ms left does against a daemon that is busy all along.
    const d = await daemon([answer(busy)], silent);
    const e = await failure(d.socketPath, 1000);
    expect(e.code, e.message).toBe('TOO_MANY_CLIENTS');
    expect(e.message).toMatch(/^the daemon is busy: queue full/);
    expect(d.connections()).toBe(2);
  });

  it('final failures are not asked again: not JSON, an error answer, more than 1 MiB', async () => {
    const bad = await daemon([answer('<html>\n')]);
    expect((await failure(bad.socketPath, 2000)).code).toBe('DAEMON_BAD_ANSWER');
    expect(bad.connections()).toBe(1);
    const said = await daemon([answer(`${JSON.stringify({ error: { code: 'SNAPSHOT_FAILED', message: 'boom' } })}\n`)]);
    const e = await failure(said.socketPath, 2000);
    expect(e.code).toBe('DAEMON_STATUS_ERROR');
    expect(e.message).toBe('the daemon answered: SNAPSHOT_FAILED: boom');
    expect(said.connections()).toBe(1);
    const large = await daemon([answer('x'.repeat(1024 * 1024 + 10))]);
    expect((await failure(large.socketPath, 5000)).code).toBe('STATUS_TOO_LARGE');
  });

  it('nothing listening: DAEMON_NOT_RUNNING; listening but silent: DAEMON_NOT_ANSWERING', async () => {
    expect((await failure(path.join(tempDir('ta-client-'), 'status.sock'), 1000)).code).toBe('DAEMON_NOT_RUNNING');
    const d = await daemon([], silent);
    const e = await failure(d.socketPath, 300);
    expect(e.code).toBe('DAEMON_NOT_ANSWERING');
    expect(e.message).toMatch(/did not answer on .* within 300 ms/);
  });
});
