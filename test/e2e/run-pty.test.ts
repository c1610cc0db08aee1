import { closeSync, openSync, writeSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { generateDrive, driveText } from '../../src/sim/receiver/index.js';
import type { PlatformSimulator } from '../../src/sim/index.js';
import { eventIdBytes, formatUuid } from '../../src/store/event-id.js';
import { requestSnapshot } from '../../src/status/client.js';
import { DEVICE, HAVE_SOCAT, receivedByTime, startPtyDaemon, type Daemon } from './daemon.js';
import { waitFor } from '../helpers/wait.js';

if (!HAVE_SOCAT) process.stderr.write('skipping run e2e over a pty: socat is missing (apt-get install socat)\n');

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Writes the drive's epochs into the pty, `epochsPerTick` at a time every `tickMs`. */
async function feed(input: string, text: string, from: number, to: number, tickMs = 10, epochsPerTick = 2): Promise<void> {
  const epochs = text.split(/(?=\$G[PN]RMC)/);
  const fd = openSync(input, 'w');
  try {
    for (let i = from; i < Math.min(to, epochs.length); i += epochsPerTick) {
      writeSync(fd, epochs.slice(i, i + epochsPerTick).join(''));
      await new Promise((r) => setTimeout(r, tickMs));
    }
  } finally {
    closeSync(fd);
  }
}

const epochCount = (text: string) => text.split(/(?=\$G[PN]RMC)/).length;

/** The backlog lane's order: events that were not the newest when they arrived must arrive oldest-first. */
function backlogOrder(times: number[]): number[] {
  let newest = -Infinity;
  const backlog: number[] = [];
  for (const t of times) {
    if (t > newest) newest = t;
    else backlog.push(t);
  }
  return backlog;
}

async function stopClean(daemon: Daemon): Promise<void> {
  daemon.child.kill('SIGTERM');
  const { code, signal } = await daemon.exited;
  expect({ code, signal }, daemon.log().slice(-2000)).toEqual({ code: 0, signal: null });
}

function expectExactlyOnce(sim: PlatformSimulator, recorded: number): number[] {
  expect(sim.events.size).toBe(recorded);
  expect(sim.stats.duplicates).toBe(0);
  const byTime = receivedByTime(sim.events);
  for (const [t, ids] of byTime) {
    expect(ids.size).toBe(1);
    expect([...ids][0]).toBe(formatUuid(eventIdBytes(DEVICE.externalSystemId, DEVICE.externalDeviceId, t)));
  }
  return [...sim.events.values()].map((e) => Date.parse(String(e.event.creationDate)));
}

describe.skipIf(!HAVE_SOCAT)('telematics-agent run: NMEA over a real pty to the simulator over real HTTP', () => {
  it('every recorded fix arrives exactly once by id, the backlog lane in order; SIGTERM exits 0', async () => {
    const { sim, pty, daemon, socket } = await startPtyDaemon(cleanups);
    const text = driveText(generateDrive({ minutes: 1, hz: 10 }));
    await feed(pty.input, text, 0, epochCount(text));
    let recorded = 0;
    await waitFor(
      'all recorded fixes delivered',
      async () => {
        const s = await requestSnapshot(socket, 1000).catch(() => undefined);
        recorded = s?.outbox.recorded ?? 0;
        return recorded > 0 && s?.outbox.pending === 0 && sim.events.size === recorded;
      },
      { timeoutMs: 90_000, detail: daemon.log },
    );
    expect(recorded).toBeGreaterThan(400);
    const times = expectExactlyOnce(sim, recorded);
    const backlog = backlogOrder(times);
    expect(backlog).toEqual([...backlog].sort((a, b) => a - b));
    const snap = await requestSnapshot(socket);
    expect(snap.upload.lastSuccessAt).toBeGreaterThan(0);
    expect(sim.stats.passwordGrants).toBe(1);
    await stopClean(daemon);
  });

  it('offline, then online: the fixes wait, then the newest goes first and the backlog drains oldest-first', async () => {
    const { sim, urls, pty, daemon, socket } = await startPtyDaemon(cleanups);
    const port = Number(new URL(urls.planningUrl).port);
    await sim.stop(); // the platform is unreachable for the first part of the drive
    const text = driveText(generateDrive({ minutes: 1, hz: 10, seed: 2 }));
    const n = epochCount(text);
    await feed(pty.input, text, 0, Math.floor(n / 2));
    await waitFor(
      'a backlog while offline',
      async () => ((await requestSnapshot(socket, 1000).catch(() => undefined))?.outbox.pending ?? 0) > 100,
      { timeoutMs: 60_000, detail: daemon.log },
    );
    const offline = await requestSnapshot(socket);
    expect(sim.events.size).toBe(0);
    await sim.start({ port });
    const rest = feed(pty.input, text, Math.floor(n / 2), n, 20, 1);
    await rest;
    let recorded = 0;
    await waitFor(
      'the backlog drained',
      async () => {
        const s = await requestSnapshot(socket, 1000).catch(() => undefined);
        recorded = s?.outbox.recorded ?? 0;
        return s?.outbox.pending === 0 && sim.events.size === recorded && recorded > offline.outbox.pending;
      },
      { timeoutMs: 120_000, detail: daemon.log },
    );
    const times = expectExactlyOnce(sim, recorded);
    // The first event after the outage is live (newer than the oldest queued), the second is the oldest fix.
    expect(times[0]).toBeGreaterThan(times[1]!);
    expect(times[1]).toBe(Math.min(...times));
    const backlog = backlogOrder(times);
    expect(backlog).toEqual([...backlog].sort((a, b) => a - b));
    await stopClean(daemon);
  });
});
