import { describe, expect, it } from 'vitest';
import { requestSnapshot } from '../../src/status/status-client.js';
import { waitFor } from '../helpers/wait.js';
import { committedOutbox, startDaemon, startReplayDaemon, stopWhenFinished } from './daemon.js';

/**
 * A restart during a platform outage, with a valid stored token and fixes queued (the field's
 * power cut in a tunnel): the real daemon, the simulator on loopback dropping every event
 * connection, then back. The first request after the outage takes a token refresh that answers
 * slowly (as one held by the start-up spread does); the backlog must not wait for that request's
 * length times the drain's pace after it.
 */
const REFRESH_LATENCY_MS = 4000;

describe('a restart while the platform is unreachable', () => {
  it('delivers the queued fixes within seconds of the platform coming back', { timeout: 180_000 }, async () => {
    // First run: token and registration stored, every event connection dropped, fixes queued.
    const r = await startReplayDaemon({
      prefix: 'ta-restart-outage-',
      sim: { users: [{ username: 'agent', password: 'pw' }], seed: 3 },
      drive: { minutes: 2, hz: 1, seed: 9 },
      replaySpeed: 0,
      config: { tuning: { upload: { minBackoffMs: 100, maxBackoffMs: 1000 } } },
      beforeStart: (sim) => sim.setFaults('events', { dropRate: 1 }),
      ready: false,
      stopSignal: 'SIGKILL',
    });
    await waitFor(
      'a stored token, a registration and the drive queued',
      () => r.sim.stats.passwordGrants === 1 && r.sim.stats.devicesCreated === 1 && committedOutbox(r.dir).length >= 100,
      { timeoutMs: 60_000, detail: r.daemon.log },
    );
    r.daemon.child.kill('SIGKILL');
    await r.daemon.exited;
    const queued = committedOutbox(r.dir).length;

    // The restart, still in the outage: its uploads fail until the window of the drain is at its least.
    const faultsBefore = r.sim.stats.faults.events;
    const d = startDaemon(r.dir, r.configFile);
    stopWhenFinished(d, 'SIGKILL');
    await waitFor('ten failed uploads after the restart', () => r.sim.stats.faults.events >= faultsBefore + 10, {
      timeoutMs: 60_000,
      detail: d.log,
    });
    // The platform is back, with its access tokens expired: the next upload refreshes, slowly.
    r.sim.setFaults('events', undefined);
    r.sim.setFaults('auth.refresh', { latencyMs: REFRESH_LATENCY_MS, limit: 1 });
    r.sim.expireAccessTokens();
    const backAt = Date.now();
    let firstAt: number | undefined;
    await waitFor(
      'every queued fix delivered',
      async () => {
        if (firstAt === undefined && r.sim.events.size > 0) firstAt = Date.now();
        const s = await requestSnapshot(r.socket, 1000).catch(() => undefined);
        return s !== undefined && s.outbox.pending === 0 && r.sim.events.size >= queued;
      },
      { timeoutMs: 120_000, intervalMs: 50, detail: d.log },
    );
    const drainedMs = Date.now() - backAt;
    const firstMs = (firstAt ?? Date.now()) - backAt;
    process.stdout.write(
      `restart in an outage: ${queued} fixes queued; platform back -> first delivery ${(firstMs / 1000).toFixed(1)} s, all delivered ${(drainedMs / 1000).toFixed(1)} s (refresh answer ${REFRESH_LATENCY_MS / 1000} s, upload.maxBackoffMs 1 s)\n`,
    );
    expect(r.sim.stats.refreshes).toBe(1);
    // The refresh's answer, the backoff step then running (at most 1 s), and a generous allowance
    // for a loaded machine: a backlog paced by the slow first request took minutes.
    expect(firstMs).toBeLessThan(REFRESH_LATENCY_MS + 15_000);
    expect(drainedMs).toBeLessThan(REFRESH_LATENCY_MS + 25_000);
  });
});
