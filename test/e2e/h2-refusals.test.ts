import { describe, expect, it } from 'vitest';
import { makeThrowawayCa } from '../../src/sim/throwaway-ca.js';
import { requestSnapshot } from '../../src/status/status-client.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/tmp.js';
import { waitFor } from '../helpers/wait.js';
import { startReplayDaemon } from './daemon.js';
import { UPLOAD_BACKOFF } from '../../src/upload/retry-decision.js';

/**
 * The real daemon against the simulator over TLS and HTTP/2, with the upload's default backoff
 * (1 s growing to 300 s). The events route refuses every stream (RST_STREAM REFUSED_STREAM) for
 * 20 s, then takes them again: the refused streams go again at once and do not
 * grow the backoff, so delivery resumes within about a second; status names the frame and code.
 */
describe('HTTP/2 stream refusals on the real daemon', () => {
  it('20 s of REFUSED_STREAM: status names it, delivery resumes within seconds, every fix once', { timeout: 120_000 }, async () => {
    const ca = makeThrowawayCa(tempDir('ta-ca-'));
    const {
      sim,
      socket,
      configFile: config,
      daemon: d,
    } = await startReplayDaemon({
      prefix: 'ta-h2-',
      simStart: { tls: { key: ca.key, cert: ca.cert, protocols: 'h2' }, idleTimeoutMs: 60_000 },
      drive: { minutes: 3, hz: 1, seed: 11 },
      replaySpeed: 1,
      config: { platform: { caFile: ca.caFile }, tuning: { upload: UPLOAD_BACKOFF } },
      ready: false,
    });
    await waitFor('first events delivered', () => sim.events.size >= 3, { timeoutMs: 60_000, detail: d.log });
    sim.setFaults('events', { resetStream: { rate: 1, code: 'REFUSED_STREAM' } });
    const refusedFrom = performance.now();
    await waitFor(
      'status names the refusal',
      async () => (await requestSnapshot(socket, 2000).catch(() => undefined))?.upload.lastError?.code === 'PLATFORM_STREAM_REFUSED',
      { timeoutMs: 20_000, detail: d.log },
    );
    const shown = await runCli(['status', '--config', config]);
    expect(shown.stdout).toMatch(/PLATFORM_STREAM_REFUSED/);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 20_000 - (performance.now() - refusedFrom))));
    const before = sim.events.size;
    const refusedRequests = sim.stats.faults.events;
    sim.setFaults('events', undefined);
    const clearedAt = performance.now();
    await waitFor('delivery resumed', () => sim.events.size > before, { timeoutMs: 60_000, detail: d.log });
    const recoveryS = (performance.now() - clearedAt) / 1000;
    const figures = `refused ${refusedRequests} streams in 20 s; delivery resumed ${recoveryS.toFixed(1)} s after the refusals ended`;
    process.stderr.write(`${figures}\n`);
    // The first backoff step (1 s, jittered to 0.5-1 s) plus a loaded machine's slack; before, the
    // refusals had grown the backoff to 8-16 s.
    expect(recoveryS, figures).toBeLessThan(4);
    expect(d.log(), figures).not.toMatch(/connection failed \(ERR_HTTP2_STREAM_ERROR\)/);
    await waitFor(
      'the backlog drained',
      async () => ((await requestSnapshot(socket, 2000).catch(() => undefined))?.outbox.pending ?? 1) === 0,
      { timeoutMs: 60_000, detail: d.log },
    );
    for (const e of sim.events.values()) expect(e.deliveries).toBe(1);
  });
});
