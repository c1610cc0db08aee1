import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { distanceAndBearing } from '../../src/gnss/geodesy.js';
import { PlatformSimulator } from '../../src/sim/index.js';
import { tempDir } from '../helpers/tmp.js';
import { waitFor } from '../helpers/wait.js';
import { loadOtmSchemas } from '../helpers/otm-schema.js';
import { driveNmea, urbanDrive } from '../motion/drive.js';
import { startDaemon, stopWhenFinished, untilStatusSocket, writeConfig } from './daemon.js';

const otm = await loadOtmSchemas();

/**
 * The 480 s drive through the real daemon (`run` replaying it as fast as it decodes) and the
 * simulator: the trip events the platform receives, where and when, and nothing twice.
 */
describe('trips end to end: the real daemon and the simulator', () => {
  it('the 480 s drive: one stop and one start at the depot, within 5 s and 25 m, odometer within 2 %, valid OTM5, none twice', async () => {
    const dir = tempDir('ta-trips-');
    const sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'pw' }] });
    const urls = await sim.start();
    onTestFinished(() => sim.stop());
    const drive = urbanDrive();
    const replayFile = path.join(dir, 'drive.nmea');
    writeFileSync(replayFile, driveNmea(drive));
    const configFile = writeConfig({ dir, urls, gnss: { replayFile, replaySpeed: 0 }, motion: { enabled: true } });
    const daemon = startDaemon(dir, configFile);
    stopWhenFinished(daemon);
    await untilStatusSocket(daemon, path.join(dir, 'status.sock'));
    await waitFor(
      'the trip events',
      () => {
        if (sim.vehicleEvents.size >= 2) return true;
        process.stderr.write(`positions ${sim.events.size}, trip events ${sim.vehicleEvents.size}\n`);
        return false;
      },
      { timeoutMs: 120_000, intervalMs: 5000, detail: () => daemon.log().slice(-3000) },
    );
    // By GNSS time, not arrival: at replaySpeed 0 both may be in flight at once, and the order in
    // which concurrent requests reach the platform is nothing the agent promises.
    const events = [...sim.vehicleEvents.values()]
      .map((r) => r.event as Record<string, any>)
      .sort((a, b) => Date.parse(String(a.creationDate)) - Date.parse(String(b.creationDate)));
    expect(events.map((e) => e.eventType)).toEqual(['stopMovingEvent', 'startMovingEvent']);
    const depot = drive.stands.find((s) => s.label === 'depot')!;
    for (const [e, truth] of [
      [events[0]!, depot.from],
      [events[1]!, depot.to],
    ] as const) {
      expect(Math.abs(Date.parse(e.creationDate) - truth)).toBeLessThanOrEqual(5000);
      expect(distanceAndBearing(e.geoReference.lat, e.geoReference.lon, depot.lat, depot.lon).distance).toBeLessThanOrEqual(25);
      expect(e).toMatchObject({ lifecycle: 'actual', vehicle: { associationType: 'inline', entity: { licensePlate: 'E2E-01' } } });
      // The odometer at the depot against the true distance driven to it.
      expect(Math.abs(e.externalAttributes.odometer.value / depot.distanceM - 1)).toBeLessThanOrEqual(0.02);
      if (otm) expect(otm.validate(e.eventType, e)).toEqual([]);
    }
    expect([...sim.vehicleEvents.values()].every((r) => r.deliveries === 1)).toBe(true);
    expect(sim.stats.duplicates).toBe(0);
  }, 180_000);
});
