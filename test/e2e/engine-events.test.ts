import { renameSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { distanceAndBearing } from '../../src/gnss/geodesy.js';
import { PlatformSimulator, type ReceivedEvent } from '../../src/sim/index.js';
import { requestSnapshot } from '../../src/status/status-client.js';
import { loadOtmSchemas } from '../helpers/otm-schema.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/tmp.js';
import { waitFor } from '../helpers/wait.js';
import { driveNmea, makeDrive } from '../motion/drive.js';
import { HAVE_SOCAT, ptyPair, startDaemon, stopWhenFinished, untilStatusSocket, writeConfig } from './daemon.js';

const otm = await loadOtmSchemas();

if (!HAVE_SOCAT) process.stderr.write('skipping engine events e2e: socat is missing (apt-get install socat)\n');

/**
 * The assumption under test: a change reaches the platform within this long after the file changed
 * plus ignition.debounceS. It covers the first read (ignition.pollMs, default 200 ms), the commit of
 * the event row (storage.commitIntervalMs, 200 ms in the tests' config) and one upload on loopback,
 * beside the 10 location updates a second of recording mode 'all'. Wall time in this process: the
 * change from just after the file is replaced, the arrival from the simulator's receivedAt (same clock).
 */
const DELIVERY_BUDGET_MS = 3000;
/** The installer's readings (odometer set, engine-hours set): the events carry the vehicle's own counts. */
const ODOMETER_KM = 123_456.7;
const ENGINE_HOURS = 1234.5;

/** The ignition as a GPIO value file: "1" on, "0" off, replaced whole so that a poll never reads it half written. */
function setIgnition(file: string, on: boolean): number {
  writeFileSync(`${file}.tmp`, on ? '1\n' : '0\n');
  renameSync(`${file}.tmp`, file);
  return Date.now();
}

interface Receiver {
  /** The GNSS time the receiver was at, at this wall time. */
  gnssAt(wallMs: number): number;
  stop(): Promise<void>;
}

/**
 * A receiver at 10 Hz in real time over the pty: epoch i is written at start + i x 100 ms (a late
 * tick writes every epoch due, so the pace does not drift), which makes its GNSS time at any wall
 * time known. Written asynchronously: a daemon that stops reading fails a wait, not the worker.
 */
async function paceReceiver(input: string, nmea: string, firstFixMs: number): Promise<Receiver> {
  const epochs = nmea.split(/(?=\$G[PN]RMC)/);
  const handle = await open(input, 'w');
  const startedAt = Date.now();
  let sent = 0;
  let stopped = false;
  const running = (async () => {
    while (!stopped && sent < epochs.length) {
      const due = Math.min(epochs.length, Math.floor((Date.now() - startedAt) / 100) + 1);
      if (due > sent) {
        await handle.write(epochs.slice(sent, due).join(''));
        sent = due;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  let closed: Promise<void> | undefined;
  return {
    gnssAt: (wallMs) => firstFixMs + (wallMs - startedAt),
    stop: () =>
      (closed ??= (async () => {
        stopped = true;
        await running;
        await handle.close();
      })()),
  };
}

const engineEvents = (sim: PlatformSimulator): ReceivedEvent[] =>
  [...sim.vehicleEvents.values()].filter((r) => r.event.eventType === 'startEngineEvent' || r.event.eventType === 'stopEngineEvent');

interface EngineChange {
  type: 'stopEngineEvent' | 'startEngineEvent';
  /** Wall ms just after the file was replaced. */
  at: number;
  /** The receiver's GNSS time then. */
  gnssAt: number;
  received: ReceivedEvent;
  /** Arrival after the change plus the debounce, ms. */
  afterDebounceMs: number;
  /** creationDate minus the receiver's GNSS time at the change, ms. */
  datedMs: number;
}

/**
 * The simulator, a socat pty and the real daemon (`run`) reading it, with the ignition file on
 * and the installer's odometer and engine hours; a parked vehicle's NMEA at 10 Hz; the file off,
 * then on, each once the last change's event has arrived; then the receiver stops and the outbox
 * drains. Everything is stopped and removed when the test finishes.
 */
async function engineOffThenOn(
  debounceS: number,
): Promise<{ sim: PlatformSimulator; changes: EngineChange[]; parked: { lat: number; lon: number } }> {
  const dir = tempDir('ta-engine-');
  const sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'pw' }] });
  const urls = await sim.start();
  onTestFinished(() => sim.stop());
  const pty = await ptyPair(dir);
  onTestFinished(() => pty.stop());
  const ignitionFile = path.join(dir, 'ignition');
  setIgnition(ignitionFile, true); // the vehicle's state when the agent starts: not a change
  const configFile = writeConfig({
    dir,
    urls,
    gnss: { path: pty.device, baudRate: 115200 },
    motion: { enabled: true },
    ignition: { file: ignitionFile, onAbove: 0, debounceS },
  });
  for (const args of [
    ['odometer', 'set', String(ODOMETER_KM)],
    ['engine-hours', 'set', String(ENGINE_HOURS)],
  ]) {
    const r = await runCli([...args, '--config', configFile]);
    expect(r.code, r.stderr).toBe(0);
  }
  const daemon = startDaemon(dir, configFile);
  stopWhenFinished(daemon);
  const socket = path.join(dir, 'status.sock');
  await untilStatusSocket(daemon, socket);

  // Parked all along (the engine is switched off and on standing); 10 min of it, far more than the test runs.
  const drive = makeDrive([{ kind: 'stand', seconds: 600, label: 'parked' }], 10);
  const receiver = await paceReceiver(pty.input, driveNmea(drive), drive.fixes[0]!.time);
  onTestFinished(() => receiver.stop());
  await waitFor(
    'the daemon on the fixes, the ignition read on',
    async () => {
      const s = await requestSnapshot(socket, 2000).catch(() => undefined);
      return s?.motion?.ignition === 'on' && sim.events.size > 0;
    },
    { timeoutMs: 30_000, detail: daemon.log },
  );
  expect(engineEvents(sim), 'the state at start is no change').toEqual([]);

  // One change at a time, the next once the last has arrived: each its own latency, no order of concurrent requests relied on.
  const made: { type: EngineChange['type']; at: number }[] = [];
  for (const on of [false, true]) {
    const type = on ? 'startEngineEvent' : 'stopEngineEvent';
    made.push({ type, at: setIgnition(ignitionFile, on) });
    // Generous: a slow delivery fails below on its measured latency, not here on a timeout.
    await waitFor(`${type} at the simulator`, () => engineEvents(sim).some((r) => r.event.eventType === type), {
      timeoutMs: 30_000,
      detail: daemon.log,
      wakeOn: (check) => sim.onRequest(check),
    });
  }

  // Nothing left to send (a duplicate would be a resend of a row still queued): the receiver stops, the outbox drains.
  await receiver.stop();
  await waitFor('the outbox drained', async () => (await requestSnapshot(socket, 2000).catch(() => undefined))?.outbox.pending === 0, {
    timeoutMs: 30_000,
    detail: daemon.log,
  });

  const changes = made.map(({ type, at }) => {
    const received = engineEvents(sim).find((r) => r.event.eventType === type)!;
    const gnssAt = receiver.gnssAt(at);
    return {
      type,
      at,
      gnssAt,
      received,
      afterDebounceMs: received.receivedAt - (at + debounceS * 1000),
      datedMs: Date.parse(String(received.event.creationDate)) - gnssAt,
    };
  });
  process.stderr.write(
    `engine events (debounce ${debounceS} s): ${changes
      .map((c) => `${c.type} arrived ${c.afterDebounceMs} ms after change + debounce, dated ${c.datedMs >= 0 ? '+' : ''}${c.datedMs} ms`)
      .join('; ')}\n`,
  );
  return { sim, changes, parked: drive.stands[0]! };
}

/**
 * The real daemon reading NMEA from a pty at 10 Hz and polling an ignition value file, and the
 * simulator: each change of the file is one engine event at the platform, soon, with the vehicle's
 * odometer and engine hours, valid OTM5.
 */
describe.skipIf(!HAVE_SOCAT)('engine events end to end: an ignition file, the real daemon and the simulator', () => {
  it('off then on: one stopEngineEvent and one startEngineEvent, each within 3 s of the change plus the debounce, valid OTM5', async () => {
    const debounceS = 1;
    const { sim, changes, parked } = await engineOffThenOn(debounceS);
    const received = engineEvents(sim);
    expect(received.map((r) => r.event.eventType).sort()).toEqual(['startEngineEvent', 'stopEngineEvent']);
    expect(received.map((r) => r.deliveries)).toEqual([1, 1]);
    expect(sim.stats.duplicates).toBe(0);
    for (const c of changes) {
      const e = c.received.event as Record<string, any>;
      // Not before the debounce (a change counts once it has held debounceS; 5 ms for the clocks' rounding), then within the budget.
      expect(c.received.receivedAt - c.at, c.type).toBeGreaterThanOrEqual(debounceS * 1000 - 5);
      expect(c.afterDebounceMs, c.type).toBeLessThanOrEqual(DELIVERY_BUDGET_MS);
      // Dated no earlier than the change (less a second for the receiver's own lag) and no later than
      // its arrival; the test below holds it to the change itself.
      expect(c.datedMs, c.type).toBeGreaterThanOrEqual(-1000);
      expect(c.datedMs, c.type).toBeLessThanOrEqual(c.received.receivedAt - c.at);
      expect(distanceAndBearing(e.geoReference.lat, e.geoReference.lon, parked.lat, parked.lon).distance).toBeLessThanOrEqual(25);
      expect(e).toMatchObject({ lifecycle: 'actual', vehicle: { associationType: 'inline', entity: { licensePlate: 'E2E-01' } } });
      // The hour meter's reading: the engine ran seconds of it here, still 1234.5 to a tenth.
      expect(e.externalAttributes.engineHours).toEqual({ value: ENGINE_HOURS, unit: 'h' });
      // The vehicle's odometer; parked, it grows by no more than a receiver's jitter.
      expect(e.externalAttributes.odometer).toMatchObject({ unit: 'm' });
      expect(e.externalAttributes.odometer.value - ODOMETER_KM * 1000).toBeGreaterThanOrEqual(0);
      expect(e.externalAttributes.odometer.value - ODOMETER_KM * 1000).toBeLessThanOrEqual(25);
      if (otm) expect(otm.validate(c.type, e)).toEqual([]);
    }
  }, 120_000);

  // A change is dated at the poll that first saw it (file-ignition.ts), by the receiver clock: not at the
  // last fix, which with a receiver running is the one after the debounce confirmed it (debounceS late).
  it('dated at the poll that first saw the change, by the receiver clock (default debounce 2 s)', async () => {
    const { changes } = await engineOffThenOn(2);
    for (const c of changes) expect(Math.abs(c.datedMs), c.type).toBeLessThanOrEqual(1000);
  }, 120_000);
});
