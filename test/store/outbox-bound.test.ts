import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/tmp.js';
import { fixAt, openOutbox, rowCount } from './outbox-helpers.js';

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

  it('below the free-disk floor stops the file growing and thins instead', async () => {
    let free = 10 * 1024 * 1024 * 1024;
    const { db, outbox } = await openOutbox(tempDir(), {
      storage: { minFreeBytes: 1024 * 1024 * 1024, commitMaxFixes: 100 },
      freeBytes: () => free,
      diskCheckIntervalMs: 0,
    });
    for (let i = 0; i < 2000; i++) outbox.record(fixAt(i));
    expect(rowCount(db)).toBe(2000);
    free = 100 * 1024 * 1024;
    for (let i = 2000; i < 4000; i++) outbox.record(fixAt(i));
    await outbox.stop();
    const s = outbox.status();
    expect(s.lowDisk).toBe(true);
    expect(rowCount(db)).toBeLessThanOrEqual(2100);
    expect(s.thinned).toBeGreaterThan(1500);
    expect(times(db).at(-1)).toBe(fixAt(3999).time);
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
  it('never throws, never corrupts, thins, and keeps recording the newest fixes', async () => {
    const dir = tempDir();
    const { db, outbox } = await openOutbox(dir, { storage: { commitMaxFixes: 100 } });
    // A database that cannot grow past ~160 KiB (1 KiB pages): the fastest honest "disk full".
    const used = db.pragma('page_count', { simple: true }) as number;
    db.pragma(`max_page_count = ${used + 150}`);
    const N = 20_000;
    for (let i = 0; i < N; i++) outbox.record(fixAt(i));
    outbox.flush();
    const s = outbox.status();
    expect(s.diskFullEvents).toBeGreaterThan(0);
    expect(s.thinned).toBeGreaterThan(0);
    expect(s.lowDisk).toBe(true);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(outbox.newest()!.time).toBe(fixAt(N - 1).time);
    const committed = times(db);
    expect(committed.length).toBeGreaterThan(500);
    expect(committed.at(-1)).toBe(fixAt(N - 1).time);
    // Everything recorded is either queued or counted as thinned: nothing vanishes silently.
    expect(outbox.pendingCount() + s.thinned).toBe(N);
    await outbox.stop();
    db.close();
  });
});
