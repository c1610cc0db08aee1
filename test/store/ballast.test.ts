import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { BALLAST_FILE, Ballast } from '../../src/store/ballast.js';
import { FullDisk } from '../../src/store/full-disk.js';
import { ManualClock } from '../../src/system/clock.js';
import { tempDir } from '../helpers/tmp.js';

describe('disk ballast', () => {
  it('is written when the disk keeps as much again free, released on a full disk, and written back with room', () => {
    const dir = tempDir();
    const free = { bytes: 10 * 1024 * 1024 };
    const ballast = new Ballast({ dataDir: dir, bytes: 256 * 1024, logger: silentLogger(), freeBytes: () => free.bytes });
    const full = new FullDisk({ ballast, dataDir: dir, clock: new ManualClock(), logger: silentLogger(), freeBytes: () => free.bytes });
    full.start();
    const file = path.join(dir, BALLAST_FILE);
    expect(statSync(file).size).toBe(256 * 1024);
    expect((statSync(file).mode & 0o777).toString(8)).toBe('600');

    full.enter({ code: 'SQLITE_FULL' });
    full.enter({ code: 'SQLITE_FULL' }); // idempotent: one episode
    expect(existsSync(file)).toBe(false);
    expect(full.state()).toMatchObject({ active: true, episodes: 1, ballastPresent: false });
    expect(full.takeCap()).toBe(true);
    expect(full.takeCap()).toBe(false);

    free.bytes = 300 * 1024; // the released ballast, not room
    expect(full.checkRoom()).toBe(false);
    free.bytes = 5 * 1024 * 1024;
    expect(full.checkRoom()).toBe(true);
    expect(full.state()).toMatchObject({ active: false, ballastPresent: true });
  });

  it('is not written on a nearly full disk, and 0 bytes means none', () => {
    const dir = tempDir();
    expect(new Ballast({ dataDir: dir, bytes: 1024 * 1024, logger: silentLogger(), freeBytes: () => 1.5 * 1024 * 1024 }).ensure()).toBe(
      false,
    );
    expect(new Ballast({ dataDir: dir, bytes: 0, logger: silentLogger() }).ensure()).toBe(false);
    expect(existsSync(path.join(dir, BALLAST_FILE))).toBe(false);
  });
});
