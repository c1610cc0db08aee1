import { describe, expect, it } from 'vitest';
import { FixHandover, MAX_WAITING_FIXES } from '../../src/fix/fix-handover.js';
import { captureLogger } from '../helpers/capture-logger.js';
import type { RecordedFix } from '../../src/fix/fix.js';
import { storeCarriedFixes } from '../../src/store/carried-fixes.js';
import { tempDir } from '../helpers/tmp.js';
import { fixAt, openOutbox, rowCount } from './outbox/helpers.js';

/**
 * What a daemon held while its card was read-only goes into the file once it is
 * writable: the committed rows delivered meanwhile are deleted, the held fixes inserted after the
 * newest row with their event ids, and the fixes recorded while the store restarts wait in the handover.
 */
describe('carrying what was held on a read-only card into the database', () => {
  it('deletes the delivered rows and stores the held fixes, delivered ones excepted, with their event ids, in one transaction', async () => {
    const dir = tempDir();
    const { db, outbox } = await openOutbox(dir);
    for (let i = 0; i < 10; i++) outbox.record(fixAt(i));
    outbox.flush({ final: true });
    db.pragma('query_only = ON');
    for (let i = 10; i < 20; i++) outbox.record(fixAt(i));
    outbox.flush();
    expect(outbox.status().buffered).toBe(10);
    // Delivered meanwhile: two committed rows, one held fix.
    const [c1, c2] = outbox.after(0, 2);
    outbox.delivered(c1!.seq);
    outbox.delivered(c2!.seq);
    const heldEntries = outbox.after(10, 10);
    const released = outbox.release();
    outbox.delivered(heldEntries[0]!.seq); // an answer landing after the release
    db.pragma('query_only = OFF');

    const stored = storeCarriedFixes(db, released);
    expect(stored).toEqual({ deleted: 2, inserted: 9 });
    expect(rowCount(db)).toBe(17);
    const ids = (db.prepare('SELECT hex(event_id) AS id FROM outbox ORDER BY seq').all() as { id: string }[]).map((r) => r.id);
    expect(new Set(ids).size).toBe(17);
    const times = (db.prepare('SELECT fix_time AS t FROM outbox ORDER BY seq').all() as { t: number }[]).map((r) => r.t);
    expect(times).toEqual([...Array(20).keys()].filter((i) => i > 1 && i !== 10).map((i) => fixAt(i).time));
    db.close();
  });

  it('the handover keeps the fixes recorded while no outbox takes them and hands them over in order', () => {
    const handover = new FixHandover();
    const got: RecordedFix[] = [];
    handover.record(fixAt(0));
    handover.attach({ record: (f) => got.push(f) });
    handover.record(fixAt(1));
    handover.detach();
    handover.record(fixAt(2));
    handover.record(fixAt(3));
    expect(got.map((f) => f.time)).toEqual([fixAt(0).time, fixAt(1).time]);
    handover.attach({ record: (f) => got.push(f) });
    expect(got.map((f) => f.time)).toEqual([0, 1, 2, 3].map((i) => fixAt(i).time));
    expect(handover.dropped).toBe(0);
  });

  it('the handover says at attach how many fixes did not fit while no outbox took them, once', () => {
    const log = captureLogger();
    const handover = new FixHandover(log.logger);
    for (let i = 0; i < MAX_WAITING_FIXES + 7; i++) handover.record(fixAt(i));
    let got = 0;
    handover.attach({ record: () => void got++ });
    expect(got).toBe(MAX_WAITING_FIXES);
    expect(handover.dropped).toBe(7);
    handover.detach();
    handover.attach({ record: () => void got++ });
    const lines = log
      .text()
      .split('\n')
      .filter((l) => l.includes('fixes dropped while the store restarted'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/"dropped":7/);
  });
});
