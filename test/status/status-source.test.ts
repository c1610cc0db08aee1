import { writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { StatusServer } from '../../src/socket/server.js';
import { parseConfig } from '../../src/config/load.js';
import { fetchSnapshot, statusTarget } from '../../src/status/status-source.js';
import { tempDir } from '../helpers/tmp.js';
import { liveSnapshot } from './fixtures.js';

/**
 * A user who cannot read the configuration gets status only from the daemon's socket. When that
 * fails too, the reason given is what happened: "can read neither" only for a permission refusal.
 */
const CONFIG = '/etc/telematics-agent/config.json';

function target(socketPath: string) {
  return { dataDir: '/var/lib/telematics-agent', socketPath, unreadableConfig: CONFIG };
}

async function failure(socketPath: string): Promise<{ code?: string; message: string }> {
  return fetchSnapshot(target(socketPath)).then(
    () => {
      throw new Error('fetchSnapshot answered');
    },
    (e: { code?: string; message: string }) => e,
  );
}

describe('status with an unreadable configuration: the reason the socket did not answer', () => {
  it('the daemon is not running: says so, not "can read neither"', async () => {
    const e = await failure(path.join(tempDir(), 'status.sock'));
    expect(e.code).toBe('DAEMON_NOT_RUNNING');
    expect(e.message).toMatch(
      /^the agent is not running \(no daemon listens on .*status\.sock\), and this user cannot read \/etc\/telematics-agent\/config\.json: run `sudo telematics-agent status`/,
    );
    expect(e.message).not.toMatch(/neither/);
  });

  it('the daemon refuses more clients: says it is busy', async () => {
    const server = new StatusServer({
      socketPath: path.join(tempDir(), 'status.sock'),
      provider: { snapshot: () => liveSnapshot(Date.now(), '/var/lib/telematics-agent') },
      logger: silentLogger(),
      maxClients: 0,
    });
    await server.start();
    onTestFinished(() => server.stop());
    const e = await failure(server.socketPath);
    expect(e.code).toBe('TOO_MANY_CLIENTS');
    expect(e.message).toMatch(/^the daemon is busy: the daemon serves 0 status clients at once; try again/);
    expect(e.message).not.toMatch(/neither/);
  });

  it('the daemon accepts but never answers: says it did not answer', async () => {
    const socketPath = path.join(tempDir(), 'status.sock');
    const held: Socket[] = [];
    const silent = createServer((s) => held.push(s));
    await new Promise<void>((resolve) => silent.listen(socketPath, resolve));
    onTestFinished(
      () =>
        new Promise<void>((resolve) => {
          for (const s of held) s.destroy();
          silent.close(() => resolve());
        }),
    );
    const e = await failure(socketPath);
    expect(e.code).toBe('DAEMON_NOT_ANSWERING');
    expect(e.message).toMatch(/^the agent is running but the daemon did not answer on .* within 3000 ms/);
    expect(e.message).not.toMatch(/neither/);
  });
});

describe('statusTarget: a configuration without dataDir', () => {
  it('an invalid one falls back to the same dataDir the agent uses by default', () => {
    const file = path.join(tempDir(), 'config.json');
    writeFileSync(file, JSON.stringify({ gnss: { path: '/dev/ttyACM0' } }));
    const valid = parseConfig(
      {
        platform: { deviceUrl: 'https://devices.example.com/api/public/v2/' },
        credentials: { username: 'gateway', password: 'pw' },
        device: { externalSystemId: 'acme', carrierCode: 'ACME' },
        gnss: { path: '/dev/ttyACM0' },
      },
      { source: file, env: {} },
    );
    expect(statusTarget(file, {}).dataDir).toBe(valid.dataDir);
    expect(valid.dataDir).toBe('/var/lib/telematics-agent');
  });
});
