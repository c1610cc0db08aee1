import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { MetaStore } from '../../src/store/meta.js';
import { openNextDatabase } from '../../src/store/database-choice.js';
import { MAX_COPY_BYTES } from '../../src/store/read-only-copy.js';
import { Outbox } from '../../src/store/outbox/outbox.js';
import { ManualClock } from '../../src/system/clock.js';
import { StoreQueue } from '../../src/store/store-queue.js';
import { canMountTmpfs, sh } from '../helpers/mount.js';
import { defaultStorage, fixAt, IDENTITY, openOutbox, rowCount } from './outbox/helpers.js';

const CAN_MOUNT = canMountTmpfs('held-by-event-id.test.ts', { remount: true });

/**
 * A read-only card whose database is too large to copy into memory: the daemon runs on the empty
 * schema, so the fixes it holds are numbered from 1 again, the numbers of real undelivered rows in
 * the file. A delivery carried by seq deleted those rows at the recovery ("delivered meanwhile").
 */
describe.skipIf(!CAN_MOUNT)('deliveries made on a read-only card are carried by event id (a real tmpfs remounted read-only)', () => {
  it('a card whose file is over the copy limit: the recovery deletes no stored row and stores every undelivered held fix', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ta-carry-id-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const data = path.join(dir, 'card');
    expect(sh('mkdir', [data])).toBe(true);
    expect(sh('mount', ['-t', 'tmpfs', '-o', 'size=160m,mode=0700', 'tmpfs', data])).toBe(true);
    onTestFinished(() => void sh('umount', ['-l', data]));

    // 40 queued fixes in the file, which a padding row makes larger than the copy limit.
    const stored = await openOutbox(data);
    for (let i = 0; i < 40; i++) stored.outbox.record(fixAt(i));
    await stored.outbox.stop();
    stored.db.prepare("INSERT INTO meta (key, value) VALUES ('padding', zeroblob(?))").run(MAX_COPY_BYTES + 1024 * 1024);
    const idsBefore = eventIds(stored.db);
    stored.db.close();
    expect(idsBefore).toHaveLength(40);

    expect(sh('mount', ['-o', 'remount,ro', data])).toBe(true);
    const options = { dataDir: data, logger: silentLogger() };
    const spell = openNextDatabase(options, silentLogger(), {});
    expect(spell.readOnly).toBe(true);
    expect(rowCount(spell.db)).toBe(0);
    const outboxOn = async (db: typeof spell.db) => {
      const o = new Outbox({
        db,
        meta: new MetaStore(db),
        identity: IDENTITY,
        dataDir: data,
        clock: new ManualClock(),
        logger: silentLogger(),
        freeBytes: () => Number.MAX_SAFE_INTEGER,
        storage: { ...defaultStorage(), commitIntervalMs: 60_000 },
      });
      await o.start();
      return o;
    };
    // The uploader's view: the store handle's queue, over the copy's outbox.
    const queue = new StoreQueue(silentLogger());
    const outbox = await outboxOn(spell.db);
    queue.resume(outbox);
    for (let i = 100; i < 110; i++) queue.record(fixAt(i));
    // Held from seq 1 on, as the file's own first rows are numbered.
    expect(outbox.after(0, 10).map((e) => e.seq)).toEqual([...Array(10).keys()].map((i) => i + 1));
    const entries = queue.after(Number.MIN_SAFE_INTEGER, 10);
    expect(entries).toHaveLength(10);
    queue.delivered(entries[0]!);
    queue.delivered(entries[1]!);
    queue.pause();
    const held = outbox.takeHeld();
    // Answers landing while no database is attached, and after the next one is: kept by event id.
    queue.delivered(entries[2]!);
    spell.db.close();

    expect(sh('mount', ['-o', 'remount,rw', data])).toBe(true);
    const back = openNextDatabase(options, silentLogger(), { held });
    onTestFinished(() => {
      back.db.close();
    });
    expect(back.readOnly).toBe(false);
    const fileOutbox = await outboxOn(back.db);
    queue.resume(fileOutbox);
    queue.delivered(entries[3]!);
    // The file's rows come first again, under the new database's slot.
    const offered = queue.after(Number.MIN_SAFE_INTEGER, 100);
    expect(offered).toHaveLength(46);
    expect(offered.some((e) => entries.some((old) => old.seq === e.seq))).toBe(false);
    await fileOutbox.stop();
    const ids = eventIds(back.db);
    // Every stored row is still there, and the 6 held fixes not delivered follow them.
    expect(ids.slice(0, 40)).toEqual(idsBefore);
    expect(ids).toHaveLength(46);
    const times = (back.db.prepare('SELECT fix_time AS t FROM outbox ORDER BY seq').all() as { t: number }[]).map((r) => r.t);
    expect(times.slice(40)).toEqual([...Array(6).keys()].map((i) => fixAt(104 + i).time));
  });
});

function eventIds(db: { prepare(sql: string): { all(): unknown[] } }): string[] {
  return (db.prepare('SELECT hex(event_id) AS id FROM outbox ORDER BY seq').all() as { id: string }[]).map((r) => r.id);
}
