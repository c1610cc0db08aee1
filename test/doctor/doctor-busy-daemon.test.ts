import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { StatusServer } from '../../src/socket/server.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/tmp.js';
import { liveSnapshot } from '../status/fixtures.js';

/**
 * doctor beside a daemon that is running but does not answer in time (a flooded status socket, here
 * a server that takes no client at all): the daemon is not taken for absent, so doctor does not
 * open the serial port the daemon holds, and says what it saw.
 */
describe('doctor beside a running daemon that does not answer', () => {
  it('warns that the agent is running but busy and leaves its serial port alone', async () => {
    const dir = tempDir('ta-doctor-busy-');
    const socketPath = path.join(dir, 'status.sock');
    const server = new StatusServer({
      socketPath,
      provider: { snapshot: () => liveSnapshot(Date.now(), dir) },
      logger: silentLogger(),
      maxClients: 0,
    });
    await server.start();
    onTestFinished(() => server.stop());
    writeFileSync(path.join(dir, 'pw'), 'x\n', { mode: 0o600 });
    mkdirSync(path.join(dir, 'data'), { mode: 0o700 });
    const cfg = path.join(dir, 'config.json');
    writeFileSync(
      cfg,
      JSON.stringify({
        platform: {
          authUrl: 'http://127.0.0.1:9/api/v1',
          deviceUrl: 'http://127.0.0.1:9/api/public/v2/',
          planningUrl: 'http://127.0.0.1:9',
        },
        credentials: { username: 'agent', passwordFile: path.join(dir, 'pw') },
        device: { externalSystemId: 'ACME', carrierCode: 'C' },
        // A device that does not exist: opening it would FAIL the NMEA check with ENOENT.
        gnss: { path: '/dev/ttyTA-doctor-busy-absent' },
        status: { socketPath },
        dataDir: path.join(dir, 'data'),
      }),
    );
    const r = await runCli(['doctor', '--config', cfg]);
    expect(r.stdout).toMatch(
      /^WARN\s+NMEA\s+the agent is running but did not answer: the daemon is busy: .*its receiver was not opened beside it/m,
    );
    expect(r.stdout).not.toMatch(/ttyTA-doctor-busy-absent.*(ENOENT|no such|cannot open)/i);
  });
});
