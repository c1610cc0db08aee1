import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { formatUuid, eventIdBytes } from '../../../src/store/event-id.js';
import { migrate } from '../../../src/store/migrations.js';
import { DELIVERY_META } from '../../../src/store/outbox/counters.js';
import { databasePath } from '../../../src/store/database.js';
import { tempDir } from '../../helpers/tmp.js';
import { IDENTITY, fixAt, openOutbox, rowCount } from './helpers.js';

describe('outbox: batching, ids, delivery', () => {
  it('keeps recorded fixes in memory until the batch commits, then in SQLite', async () => {
    const dir = tempDir();
    const { db, outbox } = await openOutbox(dir);
    for (let i = 0; i < 5; i++) outbox.record(fixAt(i));
    expect(rowCount(db)).toBe(0);
    expect(outbox.pendingCount()).toBe(5);
    outbox.flush();
    expect(rowCount(db)).toBe(5);
    expect(outbox.status()).toMatchObject({ pending: 5, buffered: 0 });
    await outbox.stop();
    db.close();
  });

  it('commits as soon as storage.commitMaxFixes are waiting', async () => {
    const { db, outbox } = await openOutbox(tempDir(), { storage: { commitMaxFixes: 10 } });
    for (let i = 0; i < 25; i++) outbox.record(fixAt(i));
    expect(rowCount(db)).toBe(20);
    await outbox.stop();
    expect(rowCount(db)).toBe(25);
    db.close();
  });

  it('commits every storage.commitIntervalMs by itself', async () => {
    // Fake timers: the commit timer fires when 50 ms have passed, not before, without waiting.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    onTestFinished(() => void vi.useRealTimers());
    const { db, outbox } = await openOutbox(tempDir(), { storage: { commitIntervalMs: 50 } });
    outbox.record(fixAt(1));
    vi.advanceTimersByTime(49);
    expect(rowCount(db)).toBe(0);
    vi.advanceTimersByTime(1);
    expect(rowCount(db)).toBe(1);
    outbox.record(fixAt(2));
    vi.advanceTimersByTime(50);
    expect(rowCount(db)).toBe(2);
    await outbox.stop();
    db.close();
  });

  it('gives each fix the UUID v5 of device identity and fix time, the same after a restart', async () => {
    const dir = tempDir();
    let o = await openOutbox(dir);
    o.outbox.record(fixAt(7));
    await o.outbox.stop();
    o.db.close();
    o = await openOutbox(dir);
    const [e] = o.outbox.after(0, 10);
    expect(e!.eventId).toBe(formatUuid(eventIdBytes(IDENTITY.externalSystemId, IDENTITY.externalDeviceId, fixAt(7).time)));
    expect(e).toMatchObject({
      time: fixAt(7).time,
      lat: fixAt(7).lat,
      altMSL: 3.25,
      speed: 12.5,
      track: 87.5,
      hdop: 0.8,
      satellitesUsed: 9,
    });
    expect(e!.lon).toBeCloseTo(fixAt(7).lon!, 7);
    // Sequence numbers go on after the restart.
    o.outbox.record(fixAt(8));
    expect(o.outbox.newest()!.seq).toBeGreaterThan(e!.seq);
    await o.outbox.stop();
    o.db.close();
  });

  it('skips fixes without a position (counted) and a repeated epoch', async () => {
    const { db, outbox } = await openOutbox(tempDir());
    outbox.record(fixAt(1, { lat: undefined }));
    outbox.record(fixAt(2));
    outbox.record(fixAt(2));
    outbox.flush();
    expect(rowCount(db)).toBe(1);
    expect(outbox.status().noPosition).toBe(1);
    await outbox.stop();
    db.close();
  });

  it('never writes a fix that was delivered before its batch committed', async () => {
    const { db, outbox } = await openOutbox(tempDir());
    outbox.record(fixAt(1));
    outbox.record(fixAt(2));
    outbox.delivered(outbox.newest()!);
    expect(outbox.pendingCount()).toBe(1);
    outbox.flush();
    expect(db.prepare('SELECT fix_time FROM outbox').all()).toEqual([{ fix_time: fixAt(1).time }]);
    expect(outbox.status()).toMatchObject({ sentTotal: 1, sentToday: 1, pending: 1 });
    await outbox.stop();
    db.close();
  });

  it('the last delivery time is saved with the counters once a minute, not only at a clean stop', async () => {
    const o = await openOutbox(tempDir());
    o.outbox.record(fixAt(0));
    o.outbox.flush();
    o.clock.advance(5_000);
    o.outbox.delivered(o.outbox.after(0, 1)[0]!);
    const deliveredAt = o.clock.wallMs();
    o.outbox.flush();
    expect(o.meta.get(DELIVERY_META.lastSuccessAt)).toBeUndefined(); // not a transaction per delivery
    o.clock.advance(60_000);
    o.outbox.flush(); // the minute's counters commit, as the timer would make it
    expect(o.meta.get(DELIVERY_META.lastSuccessAt)).toBe(String(deliveredAt));
    o.db.close(); // a power cut: no stop
  });

  it('a delivered fix stops counting as the oldest pending before its row is deleted', async () => {
    const o = await openOutbox(tempDir());
    for (let i = 0; i < 10; i++) o.outbox.record(fixAt(i));
    o.outbox.flush();
    const entries = o.outbox.after(0, 100);
    expect(entries.map((e) => e.time)).toEqual([...Array(10).keys()].map((i) => fixAt(i).time));
    for (const e of entries.slice(0, 4)) o.outbox.delivered(e);
    expect(o.outbox.after(0, 100)).toHaveLength(6);
    // Delivered but not yet deleted: the oldest pending fix is already the fifth.
    expect(o.outbox.status().oldestPendingFixTime).toBe(new Date(fixAt(4).time).toISOString());
    for (const e of entries.slice(4)) o.outbox.delivered(e);
    expect(o.outbox.status()).toMatchObject({ pending: 0 });
    expect(o.outbox.status().oldestPendingFixTime).toBeUndefined();
    o.outbox.flush({ final: true });
    expect(rowCount(o.db)).toBe(0);
    await o.outbox.stop();
    o.db.close();
  });

  it('deletes delivered committed fixes in batches (30 s, 2,000 rows, the bound, stop) and keeps the rest across restarts', async () => {
    const dir = tempDir();
    let o = await openOutbox(dir);
    for (let i = 0; i < 10; i++) o.outbox.record(fixAt(i));
    o.outbox.flush();
    const entries = o.outbox.after(0, 100);
    for (const e of entries.slice(0, 4)) o.outbox.delivered(e);
    expect(rowCount(o.db)).toBe(10);
    o.outbox.flush();
    expect(rowCount(o.db)).toBe(10); // a delete a second would rewrite the pages an insert just wrote
    expect(o.outbox.status()).toMatchObject({ pending: 6 });
    o.clock.advance(30_000);
    o.outbox.flush();
    expect(rowCount(o.db)).toBe(6);
    await o.outbox.stop();
    o.db.close();
    o = await openOutbox(dir);
    expect(o.outbox.status()).toMatchObject({ pending: 6, sentTotal: 4 });
    expect(o.outbox.status().oldestPendingFixTime).toBe(new Date(fixAt(4).time).toISOString());
    await o.outbox.stop();
    o.db.close();
  });

  it('delivered deletions: a batch of 2,000 goes at once, a few wait, the bound and stop take them all', async () => {
    const dir = tempDir();
    const o = await openOutbox(dir, { storage: { maxFixes: 3000 } });
    for (let i = 0; i < 2500; i++) o.outbox.record(fixAt(i));
    o.outbox.flush();
    o.clock.advance(1_000);
    for (const e of o.outbox.after(0, 1999)) o.outbox.delivered(e);
    o.outbox.flush();
    expect(rowCount(o.db)).toBe(2500);
    o.outbox.delivered(o.outbox.after(0, 1)[0]!); // the 2,000th
    o.outbox.flush();
    expect(rowCount(o.db)).toBe(500);
    // At the bound, delivered rows go before anything is thinned, and they never count as thinned.
    o.clock.advance(1_000);
    for (const e of o.outbox.after(0, 100)) o.outbox.delivered(e);
    for (let i = 2500; i < 5050; i++) o.outbox.record(fixAt(i)); // 500 + 2,550 > 3,000
    o.outbox.flush();
    expect(rowCount(o.db)).toBe(2950);
    expect(o.outbox.status()).toMatchObject({ thinned: 0, pending: 2950 });
    o.clock.advance(1_000);
    for (const e of o.outbox.after(0, 5)) o.outbox.delivered(e);
    await o.outbox.stop();
    expect(rowCount(o.db)).toBe(2945);
    o.db.close();
  });

  it('after() pages committed rows then buffered ones, oldest first', async () => {
    const { db, outbox } = await openOutbox(tempDir());
    for (let i = 0; i < 30; i++) outbox.record(fixAt(i));
    outbox.flush();
    for (let i = 30; i < 40; i++) outbox.record(fixAt(i));
    const all: number[] = [];
    let cursor = 0;
    for (;;) {
      const page = outbox.after(cursor, 7);
      if (page.length === 0) break;
      all.push(...page.map((e) => e.time));
      cursor = page.at(-1)!.seq;
    }
    expect(all).toEqual([...Array(40).keys()].map((i) => fixAt(i).time));
    expect(outbox.newest()!.time).toBe(fixAt(39).time);
    await outbox.stop();
    db.close();
  });

  it('moves a refused fix to dead_letter with the platform answer, buffered or committed', async () => {
    const { db, outbox } = await openOutbox(tempDir());
    outbox.record(fixAt(1));
    outbox.flush();
    outbox.record(fixAt(2));
    const [committed, buffered] = outbox.after(0, 10);
    outbox.deadLetter(committed!, 400, '[{"type":"invalidField","field":"geoReference.lat"}]');
    outbox.deadLetter(buffered!, 400, 'missingField');
    expect(outbox.after(0, 10)).toHaveLength(0);
    expect(outbox.pendingCount()).toBe(0);
    outbox.flush();
    expect(rowCount(db)).toBe(0);
    const dead = db.prepare('SELECT event_id, fix_time, status, error, fix_json FROM dead_letter ORDER BY seq').all() as {
      event_id: string;
      fix_time: number;
      status: number;
      error: string;
      fix_json: string;
    }[];
    expect(dead.map((d) => [d.event_id, d.fix_time, d.status])).toEqual([
      [committed!.eventId, fixAt(1).time, 400],
      [buffered!.eventId, fixAt(2).time, 400],
    ]);
    expect(dead[0]!.error).toContain('invalidField');
    expect(JSON.parse(dead[1]!.fix_json)).toMatchObject({ lat: fixAt(2).lat });
    expect(outbox.status().deadLetters).toBe(2);
    await outbox.stop();
    db.close();
  });
});

describe('outbox: migration 2 keeps what version 1 queued', () => {
  it('converts JSON rows to the compact form with the same event id', async () => {
    const dir = tempDir();
    const raw = new BetterSqlite3(databasePath(dir));
    migrate(raw, 1);
    const id = formatUuid(eventIdBytes('a', 'b', 1234));
    raw
      .prepare('INSERT INTO outbox (seq, event_id, fix_time, fix_json, transition) VALUES (?, ?, ?, ?, ?)')
      .run(5, id, 1234, JSON.stringify({ time: 1234, lat: 51.5, lon: -0.125, speed: 3, track: 180 }), 1);
    raw.prepare('INSERT INTO outbox (seq, event_id, fix_time, fix_json) VALUES (?, ?, ?, ?)').run(6, 'garbage', 1235, '{');
    raw.close();
    const { db, outbox } = await openOutbox(dir);
    expect(outbox.after(0, 10)).toEqual([
      { seq: 5, eventId: id, time: 1234, lat: 51.5, lon: -0.125, speed: 3, track: 180, transition: true },
    ]);
    await outbox.stop();
    db.close();
  });
});
