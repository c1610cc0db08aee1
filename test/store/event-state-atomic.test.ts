import { describe, expect, it } from 'vitest';
import { buildDamagedDatabase } from '../../bench/salvage-rig.js';
import type { VehicleEvent } from '../../src/fix/fix.js';
import { silentLogger } from '../../src/log.js';
import type { HeldFixes } from '../../src/store/held.js';
import { openDatabase, replaceDamagedDatabase, type Database } from '../../src/store/database.js';
import { MetaStore } from '../../src/store/meta.js';
import { openNextDatabase } from '../../src/store/database-choice.js';
import { tempDir } from '../helpers/tmp.js';
import { fixAt, openOutbox, rowCount } from './outbox/helpers.js';

/**
 * A vehicle event's row and the motion state that made it reach the disk in one transaction on
 * every path. State without its row is an event lost for good (the restarted tracker is past it);
 * a row without its state is an event made twice (the tracker makes it again from the older state).
 */
const KEY = 'motion.state';
const stop: VehicleEvent = { eventType: 'stopMovingEvent', time: fixAt(100_000).time, lat: 52.1, lon: 5.2, odometerM: 4321 };
const stateOfStop = { movement: { state: 'stopped' }, odometerM: 4321 };

function eventRows(db: Database): number {
  return (db.prepare('SELECT count(*) AS n FROM outbox WHERE flags >= 128').get() as { n: number }).n;
}

/** Both or neither: the event row is in the outbox exactly when its state is in meta. */
function expectBothOrNeither(db: Database): 'both' | 'neither' {
  const row = eventRows(db) === 1;
  const state = new MetaStore(db).getJson(KEY) !== undefined;
  expect({ row, state }).toEqual(row ? { row: true, state: true } : { row: false, state: false });
  return row ? 'both' : 'neither';
}

/** An event and its state held by an outbox whose file refused the commit (a read-only card), taken as a swap takes it. */
async function heldEvent(fixesBefore = 0): Promise<HeldFixes> {
  const o = await openOutbox(tempDir());
  o.db.pragma('query_only = ON');
  for (let i = 0; i < fixesBefore; i++) o.outbox.record(fixAt(i));
  o.outbox.recordEvent(stop, { key: KEY, value: stateOfStop });
  const held = o.outbox.takeHeld();
  o.db.close();
  expect(held.rows).toHaveLength(fixesBefore + 1);
  expect(held.state).toEqual([{ key: KEY, value: stateOfStop }]);
  return held;
}

const refuseInserts = (db: Database): void => {
  db.exec(`CREATE TRIGGER refuse BEFORE INSERT ON outbox BEGIN SELECT RAISE(ABORT, 'refused'); END`);
};

describe('an event row and its state: both or neither, on every path', () => {
  it('full disk: the small commits write the state only with its row; a power cut while the row waits leaves neither', async () => {
    const dir = tempDir();
    const o = await openOutbox(dir, { storage: { commitMaxFixes: 100, minFreeBytes: 0 }, freeBytes: () => 0 });
    o.db.pragma(`max_page_count = ${(o.db.pragma('page_count', { simple: true }) as number) + 150}`);
    for (let i = 0; i < 20_000; i++) o.outbox.record(fixAt(i));
    o.outbox.recordEvent(stop, { key: KEY, value: stateOfStop });
    expect(o.outbox.status().diskFull).toBeDefined();
    const fitted = rowCount(o.db);
    expect(fitted).toBeGreaterThan(500);
    expect(fitted).toBeLessThan(20_000);
    // The first chunks committed; the event row waits in memory, and so does its state.
    expect(expectBothOrNeither(o.db)).toBe('neither');

    // Delivered rows free pages a chunk at a time; after every commit, both or neither.
    let seen: 'both' | 'neither' = 'neither';
    for (let round = 0; round < 200 && seen === 'neither'; round++) {
      for (const e of o.outbox.after(0, 500)) o.outbox.delivered(e);
      o.outbox.flush();
      seen = expectBothOrNeither(o.db);
    }
    expect(seen).toBe('both');
    o.db.close(); // a power cut: what is on disk is all there is
    const reopened = openDatabase({ dataDir: dir, logger: silentLogger() });
    expect(expectBothOrNeither(reopened)).toBe('both');
    reopened.close();
  });

  it('full disk, cut before the row fits: after the restart neither the row nor the state', async () => {
    const dir = tempDir();
    const o = await openOutbox(dir, { storage: { commitMaxFixes: 100, minFreeBytes: 0 }, freeBytes: () => 0 });
    o.db.pragma(`max_page_count = ${(o.db.pragma('page_count', { simple: true }) as number) + 150}`);
    o.meta.setJson(KEY, { movement: { state: 'moving' }, odometerM: 4000 });
    for (let i = 0; i < 20_000; i++) o.outbox.record(fixAt(i));
    o.outbox.recordEvent(stop, { key: KEY, value: stateOfStop });
    for (const e of o.outbox.after(0, 500)) o.outbox.delivered(e);
    o.outbox.flush();
    o.db.close();
    const reopened = openDatabase({ dataDir: dir, logger: silentLogger() });
    // The state before the event: the restarted tracker makes the stop again, at its true time.
    expect(eventRows(reopened)).toBe(0);
    expect(new MetaStore(reopened).getJson(KEY)).toEqual({ movement: { state: 'moving' }, odometerM: 4000 });
    reopened.close();
  });

  it('swap and read-only card: the held row and its state go into the next file in one transaction, before any outbox runs', async () => {
    const held = await heldEvent(20);
    const dir = tempDir();
    const refusing = openDatabase({ dataDir: dir, logger: silentLogger() });
    refuseInserts(refusing);
    refusing.close();
    // The transaction fails: neither goes in (a power cut in it is the same).
    expect(() => openNextDatabase({ dataDir: dir, logger: silentLogger() }, silentLogger(), { held })).toThrow(/refused/);
    const after = openDatabase({ dataDir: dir, logger: silentLogger() });
    expect(expectBothOrNeither(after)).toBe('neither');
    after.exec('DROP TRIGGER refuse');
    after.close();

    const { db } = openNextDatabase({ dataDir: dir, logger: silentLogger() }, silentLogger(), { held });
    expect(rowCount(db)).toBe(21);
    expect(expectBothOrNeither(db)).toBe('both');
    expect(new MetaStore(db).getJson(KEY)).toEqual(stateOfStop);
    db.close();
  });

  it('salvage: the fresh file holds the held row with its state, and keeps the vehicle state the damaged file had', async () => {
    const held = await heldEvent();
    const dir = tempDir();
    const before = openDatabase({ dataDir: dir, logger: silentLogger() });
    new MetaStore(before).setJson(KEY, { movement: { state: 'moving' }, odometerM: 4000, engineS: 7200 });
    new MetaStore(before).setJson('motion.engineHoursSetting', { seconds: 36_000, setAt: 1 });
    before.close();
    buildDamagedDatabase(dir, 5_000);

    // Without held fixes: the odometer, engine hours and pending setting survive the salvage.
    const plain = tempDir();
    const p = openDatabase({ dataDir: plain, logger: silentLogger() });
    new MetaStore(p).setJson(KEY, { movement: { state: 'moving' }, odometerM: 4000, engineS: 7200 });
    p.close();
    buildDamagedDatabase(plain, 5_000);
    const salvaged = replaceDamagedDatabase({ dataDir: plain, logger: silentLogger() }, 'SQLITE_CORRUPT: test');
    expect(new MetaStore(salvaged).getJson(KEY)).toEqual({ movement: { state: 'moving' }, odometerM: 4000, engineS: 7200 });
    salvaged.close();

    // With one: the event's state, newer than the damaged file's, is the one kept, beside its row.
    const db = replaceDamagedDatabase({ dataDir: dir, logger: silentLogger() }, 'SQLITE_CORRUPT: test', held);
    expect(expectBothOrNeither(db)).toBe('both');
    expect(new MetaStore(db).getJson(KEY)).toEqual(stateOfStop);
    expect(new MetaStore(db).getJson('motion.engineHoursSetting')).toEqual({ seconds: 36_000, setAt: 1 });
    db.close();
  });
});
