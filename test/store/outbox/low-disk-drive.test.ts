import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { databasePath } from '../../../src/store/database.js';
import { tempDir } from '../../helpers/tmp.js';
import { fixAt, openOutbox, rowCount } from './helpers.js';

const MIB = 1024 * 1024;

describe('below storage.minFreeBytes with room still writable (issue 22.4)', () => {
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
