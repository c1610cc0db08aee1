import { closeSync, openSync, writeSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { generateDrive, driveText } from '../../src/sim/receiver/index.js';
import type { PlatformSimulator } from '../../src/sim/index.js';
import { eventIdBytes, formatUuid } from '../../src/store/event-id.js';
import { requestSnapshot } from '../../src/status/status-client.js';
import { DEVICE, HAVE_SOCAT, receivedByTime, startPtyDaemon, type Daemon } from './daemon.js';
import { freePort } from '../helpers/ports.js';
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

/**
 * One snapshot the test needs (no poll to absorb a miss): a daemon draining its backlog on a loaded
 * machine can take longer than the client's default second to answer.
 */
const ask = (socket: string) => requestSnapshot(socket, 10_000);

/** Fixes the uploader's live lane has delivered, from the daemon's status snapshot. */
async function liveSent(socket: string): Promise<number> {
  const lanes = (await ask(socket)).upload.lanes as { live?: { sent?: number } } | undefined;
  return lanes?.live?.sent ?? 0;
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
  it('every recorded fix arrives exactly once by id, the live lane sending as they come; SIGTERM exits 0', async () => {
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
    expectExactlyOnce(sim, recorded);
    expect(await liveSent(socket)).toBeGreaterThan(0);
    const snap = await ask(socket);
    expect(snap.upload.lastSuccessAt).toBeGreaterThan(0);
    expect(sim.stats.passwordGrants).toBe(1);
    await stopClean(daemon);
  });

  it('offline, then online: the fixes wait, then the live lane sends the newest before the backlog has drained', async () => {
    // A port outside the ephemeral range: while the simulator is down, the daemon's retries (or any
    // other connection on the machine) could be handed a port from listen(0) and keep it from coming back.
    const port = await freePort();
    const { sim, pty, daemon, socket } = await startPtyDaemon(cleanups, {}, undefined, { simPort: port });
    await sim.stop(); // the platform is unreachable for the first part of the drive
    const text = driveText(generateDrive({ minutes: 1, hz: 10, seed: 2 }));
    const n = epochCount(text);
    await feed(pty.input, text, 0, Math.floor(n / 2));
    await waitFor(
      'a backlog while offline',
      async () => ((await requestSnapshot(socket, 1000).catch(() => undefined))?.outbox.pending ?? 0) > 100,
      { timeoutMs: 60_000, detail: daemon.log },
    );
    const offline = await ask(socket);
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
    const arrivals = expectExactlyOnce(sim, recorded); // fix times in the order the platform received them
    // What the product promises (src/upload/lanes.ts), not the arrival order of concurrent requests:
    // the live lane sends the newest fix (or a newer one) before the backlog queued offline drains.
    const queuedOffline = [...arrivals].sort((a, b) => a - b).slice(0, offline.outbox.pending);
    const newestQueued = queuedOffline.at(-1)!;
    const backlogDrainedAt = Math.max(...queuedOffline.slice(0, -1).map((t) => arrivals.indexOf(t)));
    const newestSentAt = arrivals.findIndex((t) => t >= newestQueued);
    expect(newestSentAt, 'the newest fix arrived before the backlog had drained').toBeLessThan(backlogDrainedAt);
    expect(await liveSent(socket)).toBeGreaterThan(0);
    await stopClean(daemon);
  });
});
