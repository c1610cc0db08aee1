import { connect } from 'node:net';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { requestSnapshot } from '../../src/status/status-client.js';
import { StatusServer } from '../../src/socket/server.js';
import { SnapshotLineCache } from '../../src/socket/snapshot-cache.js';
import { tempDir } from '../helpers/tmp.js';
import { liveSnapshot } from '../status/fixtures.js';

async function server(
  o: { maxClients?: number; snapshotIntervalMs?: number } = {},
): Promise<{ server: StatusServer; builds: () => number }> {
  let builds = 0;
  const s = new StatusServer({
    socketPath: path.join(tempDir(), 'status.sock'),
    provider: {
      snapshot: () => {
        builds++;
        return liveSnapshot(Date.now(), '/var/lib/telematics-agent');
      },
    },
    logger: silentLogger(),
    ...o,
  });
  await s.start();
  onTestFinished(() => s.stop());
  return { server: s, builds: () => builds };
}

describe('the status server under many clients, on a real socket', () => {
  it('builds the snapshot once per interval however many ask at once', async () => {
    const { server: s, builds } = await server({ snapshotIntervalMs: 60_000 });
    const answers = await Promise.all(Array.from({ length: 50 }, () => requestSnapshot(s.socketPath, 10_000)));
    expect(answers.every((a) => a.source === 'daemon')).toBe(true);
    expect(builds()).toBe(1);
    expect(s.snapshotsBuilt).toBe(1);
  });

  it('closes an answered connection at once: the client reads its line and then end of file', async () => {
    const { server: s } = await server();
    const got = await new Promise<{ data: string; error?: string }>((resolve) => {
      const c = connect({ path: s.socketPath });
      let data = '';
      let error: string | undefined;
      c.on('connect', () => c.write('{"get":"status"}\n'));
      c.on('data', (d: Buffer) => (data += d.toString()));
      c.on('error', (e) => (error = e.message));
      c.on('close', () => resolve({ data, ...(error ? { error } : {}) }));
      // Not closed by the client: the daemon ends the connection itself.
    });
    expect(got.error).toBeUndefined();
    expect(got.data).toMatch(/^\{"status":\{.*\}\}\n$/);
  });

  it('a refusal reaches a client that is still writing its request, as one line', async () => {
    const { server: s } = await server({ maxClients: 0 });
    const e = await requestSnapshot(s.socketPath, 300).then(
      () => undefined,
      (err: { code?: string; message: string }) => err,
    );
    expect(e?.code).toBe('TOO_MANY_CLIENTS');
    expect(e?.message).toMatch(/^the daemon is busy: the daemon serves 0 status clients at once; try again$/);
  });
});

describe('SnapshotLineCache', () => {
  it('serves one line per interval, builds again after it, and caches nothing when the build throws', async () => {
    let now = 0;
    let n = 0;
    let fail = false;
    const cache = new SnapshotLineCache(
      {
        snapshot: () => {
          if (fail) throw new Error('boom');
          return { n: ++n } as never;
        },
      },
      500,
      { monotonicMs: () => now },
    );
    const [a, b] = await Promise.all([cache.line(), cache.line()]);
    expect(a).toBe('{"status":{"n":1}}\n');
    expect(b).toBe(a);
    now = 499;
    expect(await cache.line()).toBe(a);
    now = 500;
    fail = true;
    await expect(cache.line()).rejects.toThrow('boom');
    fail = false;
    expect(await cache.line()).toBe('{"status":{"n":2}}\n');
    expect(cache.builds).toBe(3);
  });
});
