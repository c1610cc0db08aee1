import { chownSync, existsSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import {
  applyEngineHoursSetting,
  applyOdometerSetting,
  ENGINE_HOURS_SETTING_KEY,
  MOTION_META_KEY,
} from '../../src/motion/motion-record.js';
import { openDatabase } from '../../src/store/database.js';
import { MetaStore } from '../../src/store/meta.js';
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
    expect(bad.stderr).toMatch(/not a reading in km: give the number alone, from 0 to 10000000, such as 123456\.7/);
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

describe('before the first start: no database yet', () => {
  it('odometer set and engine-hours set create it and store both; status and the tracker start from them', async () => {
    const dir = tempDir();
    const config = writeConfig(dir);
    const dataDir = path.join(dir, 'data');
    const db = path.join(dataDir, 'agent.db');
    expect(existsSync(dataDir)).toBe(false);

    const odo = await runCli(['odometer', 'set', '123456.7', '--config', config]);
    expect(odo.code, odo.stderr).toBe(0);
    expect(odo.stdout).toBe(
      `odometer set to 123456.7 km: stored in ${db} (created: the agent has not run with this dataDir yet), applied at the daemon's first start\n`,
    );
    expect(statSync(db).mode & 0o777).toBe(0o600);
    const hours = await runCli(['engine-hours', 'set', '1234.5', '--config', config]);
    expect(hours.code, hours.stderr).toBe(0);
    expect(hours.stdout).toBe('engine hours set to 1234.5 h: applied when the daemon next starts (systemctl restart telematics-agent)\n');

    // status reads the database the daemon will start on.
    const status = await runCli(['status', '--json', '--config', config]);
    expect((JSON.parse(status.stdout) as { motion?: { odometerM?: number } }).motion?.odometerM).toBe(123_456_700);

    const opened = openDatabase({ dataDir, logger: silentLogger() });
    const meta = new MetaStore(opened);
    expect(applyOdometerSetting(meta, undefined)).toMatchObject({ metres: 123_456_700 });
    expect(applyEngineHoursSetting(meta, undefined)).toMatchObject({ seconds: 4_444_200 });
    const tracker = new MotionTracker({ movement: { stillSpeedKmh: 3 }, logger: silentLogger(), ignitionWired: false });
    const reopened = await openOutbox(dataDir);
    tracker.attach(reopened.outbox, reopened.meta);
    expect(tracker.status().odometerM).toBe(123_456_700);
    reopened.db.close();
    opened.close();
  });

  it('as root, the database it creates belongs to the owner of dataDir (the service user)', async (ctx) => {
    if (process.getuid?.() !== 0) return ctx.skip();
    const dir = tempDir();
    const config = writeConfig(dir);
    const dataDir = path.join(dir, 'data');
    mkdirSync(dataDir, { mode: 0o700 });
    chownSync(dataDir, 65534, 65534);
    const r = await runCli(['engine-hours', 'set', '10', '--config', config]);
    expect(r.code, r.stderr).toBe(0);
    for (const suffix of ['', '-wal', '-shm']) {
      const file = path.join(dataDir, `agent.db${suffix}`);
      if (suffix !== '' && !existsSync(file)) continue;
      expect(statSync(file), file).toMatchObject({ uid: 65534, gid: 65534 });
    }
  });
});

describe('telematics-agent engine-hours set', () => {
  it('names the count the daemon last stored and the reading it replaces; a bad value names the fix', async () => {
    const dir = tempDir();
    const config = writeConfig(dir);
    const o = await openOutbox(path.join(dir, 'data'));
    o.meta.setJson(MOTION_META_KEY, { odometerM: 600, engineS: 7200 });
    await o.outbox.stop();
    o.db.close();
    const first = await runCli(['engine-hours', 'set', '1234.5', '--config', config]);
    expect(first.stdout).toMatch(
      /^engine hours set to 1234\.5 h \(the agent's last stored count: 2\.0 h\): applied when the daemon next starts/,
    );
    const again = await runCli(['engine-hours', 'set', '0', '--config', config]);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/; replaces the reading of 1234\.5 h set \d{4}-\d\d-\d\dT/);
    const opened = openDatabase({ dataDir: path.join(dir, 'data'), logger: silentLogger() });
    expect(new MetaStore(opened).getJson(ENGINE_HOURS_SETTING_KEY)).toMatchObject({ seconds: 0 });
    opened.close();

    for (const value of ['12 h', '-1', '2000000', '']) {
      const bad = await runCli(['engine-hours', 'set', value, '--config', config]);
      expect(bad.code, value).toBe(2);
      expect(bad.stderr, value).toMatch(/not a reading in hours: give the number alone, from 0 to 1000000, such as 1234\.5/);
    }
  });
});
