import { describe, expect, it } from 'vitest';
import type { PlatformSimulator } from '../../src/sim/index.js';
import { requestSnapshot } from '../../src/status/status-client.js';
import type { StatusSnapshot } from '../../src/status/snapshot.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait.js';
import { startReplayDaemon } from './daemon.js';

/**
 * A systemic refusal against real processes: the daemon (`run`) replays a drive into its outbox while the
 * simulator on loopback refuses events; the CLI (`status`, `outbox`) runs beside it.
 */
const MAX_BACKOFF_MS = 1000;

async function setup(fault: Record<string, unknown>) {
  // 5 minutes at 10 Hz, replayed as fast as possible: a backlog of thousands of fixes at once.
  const {
    dir,
    sim,
    socket,
    configFile: config,
    daemon,
  } = await startReplayDaemon({
    prefix: 'ta-systemic-',
    sim: { users: [{ username: 'agent', password: 'pw' }], seed: 11 },
    drive: { minutes: 5, hz: 10, seed: 5 },
    replaySpeed: 0,
    config: { upload: { concurrency: 4 }, tuning: { upload: { minBackoffMs: 100, maxBackoffMs: MAX_BACKOFF_MS } } },
    beforeStart: (s) => s.setFaults('events', fault),
    ready: false,
    stopSignal: 'SIGKILL',
  });
  const snapshot = () => requestSnapshot(socket, 2000).catch(() => undefined);
  const until = async (cond: (s: StatusSnapshot) => boolean, what: string) => {
    await waitFor(
      what,
      async () => {
        if (daemon.child.exitCode !== null) throw new Error(`the daemon exited:\n${daemon.log()}`);
        const s = await snapshot();
        return s !== undefined && cond(s);
      },
      { timeoutMs: 120_000, intervalMs: 50, detail: daemon.log },
    );
    return (await snapshot())!;
  };
  return { dir, sim, config, daemon, until };
}

/**
 * Every fix reached the platform under one id (the simulator keys events by id). A second delivery
 * of an id is only acceptable where the daemon could not know the first arrived: a request past
 * its deadline or a dropped connection, which a CPU-starved test machine can cause.
 */
function expectOncePerId(sim: PlatformSimulator, log: string): void {
  if (sim.stats.duplicates > 0) expect(log).toMatch(/PLATFORM_TIMEOUT|PLATFORM_UNREACHABLE/);
}

const lines = (text: string) => text.split('\n').filter((l) => l.trim() !== '');

describe('a platform that answers 405 to every event (wrong platform.eventsPath)', () => {
  it(
    'keeps the backlog intact, reports FAILING with 405 and the hint, probes every half to whole maxBackoffMs (jittered), delivers everything once when fixed',
    { timeout: 300_000 },
    async () => {
      const { sim, config, daemon, until } = await setup({ status: 405 });
      const arrivals: number[] = [];
      sim.onRequest((route) => {
        if (route === 'events') arrivals.push(performance.now());
      });
      const ended = await until(
        (s) => s.receiver?.link === 'ended' && (s.outbox.recorded ?? 0) > 0 && s.upload.lanes?.buffered === 0,
        'the replay to end',
      );
      const recorded = ended.outbox.recorded!;
      expect(recorded).toBeGreaterThan(2000);
      expect(ended.outbox.pending).toBe(recorded);

      const status = await runCli(['status', '--json', '--config', config]);
      expect(status.code).toBe(2);
      const s = JSON.parse(status.stdout) as StatusSnapshot & { health: { level: string; reasons: string[] } };
      expect(s.health.level).toBe('failing');
      expect(s.health.reasons.join('\n')).toMatch(/HTTP 405 to every event: check platform\.eventsPath, proxy, event shape/);
      expect(s.upload.fault).toMatchObject({ kind: 'config', status: 405 });
      expect(s.upload.fault!.hint).toMatch(/platform\.eventsPath/);
      expect(s.outbox).toMatchObject({ pending: recorded, deadLetters: 0 });
      const human = await runCli(['status', '--config', config]);
      expect(human.stdout).toMatch(/FAILING since .*HTTP 405 for every event/);

      // The probe rate: three more requests, each at least half of maxBackoffMs after the one before
      // (the probe wait is jittered over half to all of it, so a fleet does not probe in lockstep).
      const from = arrivals.length;
      await waitFor('three probes', () => arrivals.length >= from + 3, { timeoutMs: 60_000 });
      // Arrival is when this process handles the request: a CPU-starved test process sees one
      // late and the next on time, so the gap it measures can be short of the daemon's wait by
      // that delay. 100 ms of slack still tells the probe wait (500-1000 ms) from the backoff's first steps (50-200 ms).
      const gaps = arrivals.slice(from - 1, from + 3).flatMap((t, i, a) => (i === 0 ? [] : [Math.round(t - a[i - 1]!)]));
      process.stderr.write(`405 probes: ${gaps.join(', ')} ms apart (maxBackoffMs ${MAX_BACKOFF_MS})\n`);
      for (const gap of gaps) expect(gap, `probe gaps ${gaps.join(', ')} ms`).toBeGreaterThanOrEqual(MAX_BACKOFF_MS / 2 - 100);

      // Export while the daemon runs: every pending fix, as committed.
      const exported = await runCli(['outbox', 'export', '--pending', '-', '--config', config]);
      expect(exported.code).toBe(0);
      expect(lines(exported.stdout)).toHaveLength(recorded);
      expect(JSON.parse(lines(exported.stdout)[0]!)).toMatchObject({ kind: 'pending', eventId: expect.any(String) });

      sim.setFaults('events', undefined); // the path is fixed
      const drained = await until((x) => x.outbox.pending === 0 && x.upload.fault === undefined, 'the backlog to drain');
      expect(sim.events.size).toBe(recorded);
      expectOncePerId(sim, daemon.log());
      expect(drained.outbox.deadLetters).toBe(0);
      daemon.child.kill('SIGTERM');
      expect((await daemon.exited).code).toBe(0);
      console.info(
        `405 scenario: fixes recorded ${recorded}, delivered ${sim.events.size}, dead-lettered 0, lost ${recorded - sim.events.size}, repeated deliveries of one id ${sim.stats.duplicates}`,
      );
    },
  );
});

describe('a platform that refuses one event with an OTM5 400 while accepting the others', () => {
  it('dead-letters only that event; the CLI exports and requeues it beside the running daemon', { timeout: 300_000 }, async () => {
    const { sim, config, daemon, until } = await setup({ rejectEvents: 1 });
    const done = await until(
      (s) => s.receiver?.link === 'ended' && (s.outbox.recorded ?? 0) > 0 && s.upload.lanes?.buffered === 0 && s.outbox.pending === 0,
      'everything delivered or dead-lettered',
    );
    const recorded = done.outbox.recorded!;
    expect(sim.events.size).toBe(recorded - 1);
    const withDead = await until((s) => s.outbox.deadLetters === 1, 'the dead letter committed');
    expect(withDead.outbox.lastDeadLetter).toMatchObject({ status: 400, reason: expect.stringContaining('geoReference.lat') });

    const exported = await runCli(['outbox', 'export', '--dead-letters', '--config', config]);
    expect(exported.code).toBe(0);
    const dead = lines(exported.stdout).map((l) => JSON.parse(l) as { kind: string; eventId: string; status: number });
    expect(dead).toEqual([expect.objectContaining({ kind: 'dead-letter', status: 400 })]);
    expect(sim.events.has(dead[0]!.eventId)).toBe(false);

    sim.setFaults('events', undefined); // the integrator fixed the cause
    const requeued = await runCli(['outbox', 'requeue-dead-letters', '--config', config]);
    expect(requeued.code).toBe(0);
    expect(requeued.stdout).toMatch(/^requeued 1 dead letter into the outbox/);
    await until((s) => s.outbox.pending === 0 && s.outbox.deadLetters === 0 && sim.events.size === recorded, 'the requeued fix delivered');
    expect(sim.events.has(dead[0]!.eventId)).toBe(true); // under its original id
    expectOncePerId(sim, daemon.log());
    daemon.child.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);
    console.info(
      `one-bad-event scenario: fixes recorded ${recorded}, delivered ${recorded - 1} (+1 after requeue), dead-lettered 1 (then requeued), lost 0`,
    );
  });
});
