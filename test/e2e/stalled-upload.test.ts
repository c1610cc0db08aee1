import { createSecureServer, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { writeFileSync } from 'node:fs';
import { describe, expect, it, onTestFinished } from 'vitest';
import { PlatformSimulator } from '../../src/sim/index.js';
import { driveText, generateDrive } from '../../src/sim/receiver/index.js';
import { makeThrowawayCa } from '../../src/sim/throwaway-ca.js';
import { requestSnapshot } from '../../src/status/status-client.js';
import { assessHealth } from '../../src/status/health.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/tmp.js';
import { waitFor } from '../helpers/wait.js';
import { startDaemon, stopWhenFinished, writeConfig } from './daemon.js';

/**
 * An events host that takes the connection but never the uploads: an HTTP/2 server announcing
 * SETTINGS_MAX_CONCURRENT_STREAMS 0, or one that accepts every stream and never answers. The token
 * service and the device service are the simulator's; the daemon is the real one.
 */
const DEADLINE_MS = 5000;

async function hostileEvents(mode: 'no-streams' | 'hung', tls: { key: string; cert: string }): Promise<string> {
  const hung: ServerHttp2Stream[] = [];
  const server = createSecureServer({ ...tls, ...(mode === 'no-streams' ? { settings: { maxConcurrentStreams: 0 } } : {}) });
  server.on('stream', (stream) => {
    hung.push(stream); // read, never answered
    stream.resume();
  });
  server.on('sessionError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        for (const s of hung) s.destroy();
        server.close(() => resolve());
        setTimeout(resolve, 2000).unref();
      }),
  );
  return `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('an upload that makes no progress', () => {
  for (const mode of ['no-streams', 'hung'] as const) {
    it(
      `is DEGRADED in status, saying what it waits for (${mode === 'no-streams' ? 'SETTINGS_MAX_CONCURRENT_STREAMS 0' : 'streams never answered'})`,
      { timeout: 120_000 },
      async () => {
        const dir = tempDir('ta-stalled-');
        const ca = makeThrowawayCa(dir);
        const sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'pw' }] });
        const urls = await sim.start({ tls: { key: ca.key, cert: ca.cert, protocols: 'h2' } });
        onTestFinished(() => sim.stop());
        const planningUrl = await hostileEvents(mode, ca);
        const replayFile = path.join(dir, 'drive.nmea');
        writeFileSync(replayFile, driveText(generateDrive({ minutes: 2, hz: 1, seed: 4 })));
        const configFile = writeConfig({
          dir,
          urls: { ...urls, planningUrl },
          gnss: { replayFile, replaySpeed: 0 },
          platform: { caFile: ca.caFile, requestTimeoutMs: DEADLINE_MS },
        });
        const d = startDaemon(dir, configFile);
        stopWhenFinished(d, 'SIGKILL');
        const socket = path.join(dir, 'status.sock');
        const seen: string[] = [];
        const start = Date.now();
        await waitFor(
          'status DEGRADED for the stalled upload',
          async () => {
            const s = await requestSnapshot(socket, 1000).catch(() => undefined);
            if (!s) return false;
            const h = assessHealth(s);
            seen.push(
              `${((Date.now() - start) / 1000).toFixed(1)} s ${h.level} ${s.outbox.pending} pending ${JSON.stringify(s.upload.lanes?.state)} ${h.reasons.join('; ')}`,
            );
            return h.level === 'degraded' && h.reasons.some((r) => /^upload stalled/.test(r));
          },
          { timeoutMs: 60_000, intervalMs: 500, detail: () => `${seen.slice(-20).join('\n')}\n${d.log().slice(-2000)}` },
        );
        process.stdout.write(`${seen.filter((_, i) => i % 4 === 0 || i === seen.length - 1).join('\n')}\n`);
      },
    );
  }
});
