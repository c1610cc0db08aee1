import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { databasePath } from '../../../src/store/database.js';
import { tempDir } from '../../helpers/tmp.js';
import { LOW_DISK_META_KEY, type LowDiskFacts } from '../../../src/store/outbox/bound.js';
import { fixAt, openOutbox, rowCount } from './helpers.js';

const MIB = 1024 * 1024;

describe('below storage.minFreeBytes with room still writable', () => {
  it('keeps a 10-minute 10 Hz drive whole when the disk has room for it, on a real SQLite file', async () => {
    const dir = tempDir('ta-lowdisk-');
    // 150 MiB free under the default 200 MiB floor, the platform down: the free-space probe is the
    // hardware seam (statfs), the database a real file.
    const free = { bytes: 150 * MIB };
    const { db, outbox, clock } = await openOutbox(dir, { freeBytes: () => free.bytes });
    const N = 6000;
    for (let i = 0; i < N; i++) {
      outbox.record(fixAt(i, { transition: false }));
      if (i % 10 === 9) {
        clock.advance(1000);
        outbox.flush();
      }
    }
    await outbox.stop();
    const s = outbox.status();
    const share = s.thinned / N;
    const bytes = statSync(databasePath(dir)).size;
    process.stderr.write(
      `10 min at 10 Hz, 150 MiB free under a 200 MiB floor: thinned ${s.thinned} of ${N} (${(share * 100).toFixed(1)} %), bound ${s.bound}, kept ${rowCount(db)}, file ${bytes} B\n`,
    );
    expect(s.lowDisk).toBe(true);
    expect(s.thinned).toBe(0);
    expect(rowCount(db)).toBe(N);
    db.close();
  });

  it('takes at most a quarter of the space left below the floor however long the outage, and never less than 1,000 rows', async () => {
    const dir = tempDir('ta-lowdisk-');
    // The file's growth comes out of the free space, as on a real card.
    const start = { free: 1 * MIB, size: 0 };
    const fileSize = () => statSync(databasePath(dir)).size;
    const { db, outbox, clock } = await openOutbox(dir, {
      freeBytes: () => start.free - (fileSize() - start.size),
      diskCheckIntervalMs: 0,
    });
    start.size = fileSize();
    const N = 10_000;
    for (let i = 0; i < N; i++) {
      outbox.record(fixAt(i, { transition: false }));
      if (i % 10 === 9) {
        clock.advance(1000);
        outbox.flush();
      }
    }
    await outbox.stop();
    const s = outbox.status();
    const grown = fileSize() - start.size;
    process.stderr.write(
      `1 MiB free under the floor, 10,000 fixes recorded: the file grew ${grown} B, bound ${s.bound}, thinned ${s.thinned}\n`,
    );
    expect(s.lowDisk).toBe(true);
    // A quarter of 1 MiB, give or take the pages of the last commit and the schema's own.
    expect(grown).toBeLessThanOrEqual(MIB / 4 + 16 * 1024);
    expect(s.bound).toBeGreaterThan(1500);
    expect(s.thinned).toBeGreaterThan(0);
    expect(rowCount(db) + s.thinned).toBe(N);

    // Almost nothing free: the live lane still has its queue of 1,000.
    const tiny = await openOutbox(tempDir('ta-lowdisk-'), { freeBytes: () => 4096, diskCheckIntervalMs: 0 });
    for (let i = 0; i < 3000; i++) tiny.outbox.record(fixAt(i, { transition: false }));
    await tiny.outbox.stop();
    expect(tiny.outbox.status().bound).toBe(1000);
    tiny.db.close();
    db.close();
  });
});

describe('below storage.minFreeBytes across restarts', () => {
  it('keeps the bound set when the floor was crossed through reopenings, and forgets it above the floor', async () => {
    const dir = tempDir('ta-lowdisk-');
    const start = { free: 1 * MIB, size: 0 };
    const fileSize = () => statSync(databasePath(dir)).size;
    const freeBytes = () => start.free - (fileSize() - start.size);
    let first = await openOutbox(dir, { freeBytes, diskCheckIntervalMs: 0 });
    start.size = fileSize();
    let i = 0;
    const drive = async (o: Awaited<ReturnType<typeof openOutbox>>, n: number) => {
      for (const end = i + n; i < end; i++) {
        o.outbox.record(fixAt(i, { transition: false }));
        if (i % 10 === 9) {
          o.clock.advance(1000);
          o.outbox.flush();
        }
      }
      await o.outbox.stop();
    };
    await drive(first, 6000);
    const bound = first.outbox.status().bound;
    const kept = first.meta.getJson<LowDiskFacts>(LOW_DISK_META_KEY);
    expect(kept).toMatchObject({ bound, freeBytes: 1 * MIB, floor: 200 * MIB });
    first.db.close();
    // Six ignition cycles still below the floor: a new Outbox on the same file each time.
    const grownAt: number[] = [];
    for (let cycle = 0; cycle < 6; cycle++) {
      const again = await openOutbox(dir, { freeBytes, diskCheckIntervalMs: 0 });
      await drive(again, 2000);
      expect(again.outbox.status()).toMatchObject({ lowDisk: true, bound });
      grownAt.push(fileSize() - start.size);
      again.db.close();
    }
    process.stderr.write(
      `1 MiB free under the floor, 6 restarts of 2,000 fixes after 6,000: bound ${bound} each run, file grew ${grownAt.join(', ')} B\n`,
    );
    // Sized afresh each run the file would have taken 1 - 0.75^7 = 87 % of the MiB.
    expect(Math.max(...grownAt)).toBeLessThanOrEqual(MIB / 4 + 16 * 1024);

    // Back above 1.1 x the floor: the bound is lifted and forgotten, also for the next run.
    start.free = 1024 * MIB;
    const roomy = await openOutbox(dir, { freeBytes, diskCheckIntervalMs: 0 });
    await drive(roomy, 10);
    expect(roomy.outbox.status().lowDisk).toBe(false);
    expect(roomy.meta.get(LOW_DISK_META_KEY)).toBeUndefined();
    roomy.db.close();
  });

  it('between the floor and 1.1 x the floor keeps what an earlier run set', async () => {
    const dir = tempDir('ta-lowdisk-');
    const free = { bytes: 1 * MIB };
    const a = await openOutbox(dir, { freeBytes: () => free.bytes, diskCheckIntervalMs: 0 });
    for (let i = 0; i < 100; i++) a.outbox.record(fixAt(i));
    await a.outbox.stop();
    const bound = a.outbox.status().bound;
    a.db.close();
    free.bytes = 210 * MIB;
    const b = await openOutbox(dir, { freeBytes: () => free.bytes, diskCheckIntervalMs: 0 });
    b.outbox.record(fixAt(100));
    await b.outbox.stop();
    expect(b.outbox.status()).toMatchObject({ lowDisk: true, bound });
    b.db.close();
  });
});
