import { describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/tmp.js';
import { MAX_BUFFER_WHILE_FULL } from '../../../src/store/outbox/outbox.js';
import { fixAt, openOutbox, rowCount } from './helpers.js';

function times(db: import('better-sqlite3').Database): number[] {
  return (db.prepare('SELECT fix_time FROM outbox ORDER BY seq').all() as { fix_time: number }[]).map((r) => r.fix_time);
}

describe('outbox bound: thinning the oldest backlog', () => {
  it('stays within storage.maxFixes, keeps the newest tenth whole, every 3rd old fix and every transition, and counts what went', async () => {
    const dir = tempDir();
    const { db, outbox } = await openOutbox(dir, { storage: { maxFixes: 1000, commitMaxFixes: 100 } });
    const N = 3000;
    for (let i = 0; i < N; i++) outbox.record(fixAt(i));
    await outbox.stop();
    const kept = times(db);
    expect(kept.length).toBeLessThanOrEqual(1000);
    // The most recent tenth of the bound is all there.
    const newest = [...Array(90).keys()].map((k) => fixAt(N - 90 + k).time);
    expect(kept.slice(-90)).toEqual(newest);
    // Every transition survives (fixAt marks every 50th).
    const keptSet = new Set(kept);
    for (let i = 0; i < N; i += 50) expect(keptSet.has(fixAt(i).time)).toBe(true);
    // Old fixes are spread evenly over the whole trip (shape kept): each third of the drive keeps
    // a similar share, the oldest is not decayed to its transitions alone.
    expect(kept[0]).toBe(fixAt(0).time);
    const thirds = [0, 1, 2].map((t) => kept.filter((x) => x >= fixAt(t * 1000).time && x < fixAt((t + 1) * 1000).time).length);
    // (Transitions alone would be 20 a third; decaying the oldest by halves each pass leaves ~30.)
    for (const n of thirds) expect(n).toBeGreaterThan(100);
    expect(thirds[2]! / thirds[0]!).toBeLessThan(5);
    // Counted, and the count survives a restart.
    const thinned = outbox.status().thinned;
    expect(thinned).toBe(N - kept.length);
    db.close();
    const again = await openOutbox(dir, { storage: { maxFixes: 1000 } });
    expect(again.outbox.status().thinned).toBe(thinned);
    expect(again.outbox.pendingCount()).toBe(kept.length);
    await again.outbox.stop();
    again.db.close();
  });

  it('below the free-disk floor grows by a quarter of what is free, then stops the file growing and thins instead', async () => {
    let free = 10 * 1024 * 1024 * 1024;
    const { db, outbox } = await openOutbox(tempDir(), {
      storage: { minFreeBytes: 1024 * 1024 * 1024, commitMaxFixes: 100 },
      freeBytes: () => free,
      diskCheckIntervalMs: 0,
    });
    for (let i = 0; i < 2000; i++) outbox.record(fixAt(i));
    expect(rowCount(db)).toBe(2000);
    free = 200 * 1024;
    for (let i = 2000; i < 5000; i++) outbox.record(fixAt(i));
    await outbox.stop();
    const s = outbox.status();
    expect(s.lowDisk).toBe(true);
    // 2,000 rows plus a quarter of 200 KiB at 128 B a row (the least assumed; packed rows take ~64).
    expect(s.bound).toBe(2000 + Math.floor(51_200 / 128));
    expect(rowCount(db)).toBeLessThanOrEqual(s.bound);
    expect(s.thinned).toBeGreaterThan(2000);
    expect(times(db).at(-1)).toBe(fixAt(4999).time);
    db.close();
  });

  it('lifts the lowered bound once the disk has room again', async () => {
    let free = 0;
    const { db, outbox } = await openOutbox(tempDir(), {
      storage: { minFreeBytes: 1000, commitMaxFixes: 100 },
      freeBytes: () => free,
      diskCheckIntervalMs: 0,
    });
    for (let i = 0; i < 3000; i++) outbox.record(fixAt(i));
    expect(outbox.status()).toMatchObject({ lowDisk: true, bound: 1000 });
    expect(rowCount(db)).toBeLessThanOrEqual(1000);
    free = 1e12;
    const before = rowCount(db);
    for (let i = 3000; i < 5000; i++) outbox.record(fixAt(i));
    await outbox.stop();
    expect(outbox.status().lowDisk).toBe(false);
    expect(rowCount(db)).toBe(before + 2000);
    db.close();
  });
});

describe('outbox on a full disk (SQLITE_FULL)', () => {
  // A database that cannot grow past ~160 KiB (1 KiB pages): the fastest honest "disk full";
  // test/e2e/full-disk.test.ts fills a real tmpfs.
  async function fullOutbox(free: { bytes: number }) {
    // No free-disk floor here: what a full disk does, not what the floor does (the tests above).
    const { db, outbox } = await openOutbox(tempDir(), { storage: { commitMaxFixes: 100, minFreeBytes: 0 }, freeBytes: () => free.bytes });
    const used = db.pragma('page_count', { simple: true }) as number;
    db.pragma(`max_page_count = ${used + 150}`);
    return { db, outbox };
  }

  it('never throws nor corrupts; what does not fit waits in memory, delivered rows make room, nothing is thinned', async () => {
    const free = { bytes: 0 };
    const { db, outbox } = await fullOutbox(free);
    const N = 20_000;
    for (let i = 0; i < N; i++) outbox.record(fixAt(i));
    outbox.flush();
    let s = outbox.status();
    expect(s.diskFullEvents).toBe(1);
    expect(s.diskFull).toBeDefined();
    expect(s.thinned).toBe(0);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    const fitted = rowCount(db);
    expect(fitted).toBeGreaterThan(500);
    expect(s.buffered).toBe(N - fitted);
    expect(outbox.pendingCount()).toBe(N);
    expect(outbox.newest()!.time).toBe(fixAt(N - 1).time);

    // Delivery goes on; deleting what was delivered frees the pages the waiting fixes take.
    for (const e of outbox.after(0, 5000)) outbox.delivered(e);
    outbox.flush();
    s = outbox.status();
    expect(s.buffered).toBeLessThan(N - fitted - 500);
    expect(outbox.pendingCount()).toBe(N - 5000);
    expect(s.thinned).toBe(0);

    // Room again (statfs): the file may grow, the bound is the configured one, everything is committed.
    free.bytes = 1e12;
    outbox.flush();
    s = outbox.status();
    expect(s).toMatchObject({ buffered: 0, lowDisk: false, thinned: 0, bound: 2_000_000 });
    expect(s.diskFull).toBeUndefined();
    expect(rowCount(db)).toBe(N - 5000);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    await outbox.stop();
    db.close();
  });

  it('past an hour of fixes in memory, thins the oldest held ones and counts them', async () => {
    const { db, outbox } = await fullOutbox({ bytes: 0 });
    const N = MAX_BUFFER_WHILE_FULL + 5000;
    for (let i = 0; i < N; i++) outbox.record(fixAt(i));
    outbox.flush();
    const s = outbox.status();
    expect(s.buffered).toBeLessThanOrEqual(MAX_BUFFER_WHILE_FULL);
    expect(s.thinned).toBeGreaterThan(0);
    // Everything recorded is either queued or counted as thinned: nothing vanishes silently.
    expect(outbox.pendingCount() + s.thinned).toBe(N);
    expect(outbox.newest()!.time).toBe(fixAt(N - 1).time);
    await outbox.stop();
    db.close();
  });
});
