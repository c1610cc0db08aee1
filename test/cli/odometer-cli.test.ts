import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { MOTION_META_KEY } from '../../src/motion/motion-record.js';
import { MotionTracker } from '../../src/motion/motion-tracker.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/tmp.js';
import { writeConfig } from '../status/fixtures.js';
import { openOutbox } from '../store/outbox/helpers.js';

describe('telematics-agent odometer set', () => {
  it('stores the reading; the agent starts from it at its next start; set again it says what it replaces', async () => {
    const dir = tempDir();
    const config = writeConfig(dir);
    const dataDir = path.join(dir, 'data');
    const o = await openOutbox(dataDir);
    await o.outbox.stop();
    o.db.close();

    const first = await runCli(['odometer', 'set', '123456.7', '--config', config]);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/odometer set to 123456\.7 km: applied when the daemon next starts/);
    const again = await runCli(['odometer', 'set', '123460', '--config', config]);
    expect(again.stdout).toMatch(/replaces the reading of 123456\.7 km/);

    const reopened = await openOutbox(dataDir);
    const tracker = new MotionTracker({ movement: { stillSpeedKmh: 3 }, logger: silentLogger(), ignitionWired: false });
    tracker.attach(reopened.outbox, reopened.meta);
    expect(tracker.status().odometerM).toBe(123_460_000);
    reopened.db.close();

    const bad = await runCli(['odometer', 'set', '12 km', '--config', config]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/not a reading in km: give a number such as 123456\.7/);
  });

  it("names the count the daemon last stored, which a running daemon's own has moved on from", async () => {
    const dir = tempDir();
    const config = writeConfig(dir);
    const o = await openOutbox(path.join(dir, 'data'));
    o.meta.setJson(MOTION_META_KEY, { odometerM: 600 });
    await o.outbox.stop();
    o.db.close();
    const r = await runCli(['odometer', 'set', '123456.7', '--config', config]);
    expect(r.stdout).toMatch(
      /^odometer set to 123456\.7 km \(the agent's last stored count: 0\.6 km\): applied when the daemon next starts/,
    );
  });
});
