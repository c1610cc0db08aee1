import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log.js';
import { openDatabase } from '../../../src/store/database.js';
import { deadLetterLines, pendingLines, requeueDeadLetters } from '../../../src/store/outbox/dead-letters.js';
import type { QueueEntry } from '../../../src/upload/upload-queue.js';
import { UploadLanes } from '../../../src/upload/lanes.js';
import { tempDir } from '../../helpers/tmp.js';
import { fixAt, openOutbox, rowCount, type OpenOutbox } from './helpers.js';

let open: OpenOutbox | undefined;
afterEach(async () => {
  await open?.outbox.stop();
  open?.db.close();
  open = undefined;
});

/** Records n fixes, commits them, and dead-letters the first `dead` of them through the outbox. */
async function withDeadLetters(n: number, dead: number): Promise<{ o: OpenOutbox; dir: string; ids: string[] }> {
  const dir = tempDir();
  const o = await openOutbox(dir);
  open = o;
  for (let i = 0; i < n; i++) o.outbox.record(fixAt(i));
  o.outbox.flush();
  const entries = o.outbox.after(Number.MIN_SAFE_INTEGER, dead);
  for (const e of entries) o.outbox.deadLetter(e, 400, `event upload: HTTP 400 (creationDate: refused ${e.seq})`);
  o.outbox.flush({ final: true });
  return { o, dir, ids: entries.map((e) => e.eventId) };
}

describe('dead letters', () => {
  it('are bounded by disk space, never by a count: 1,200 stay, with the number and the last reason in status', async () => {
    const { o } = await withDeadLetters(1300, 1200);
    expect((o.db.prepare('SELECT count(*) AS n FROM dead_letter').get() as { n: number }).n).toBe(1200);
    const s = o.outbox.status();
    expect(s.deadLetters).toBe(1200);
    expect(s.pending).toBe(100);
    expect(s.lastDeadLetter).toMatchObject({ status: 400, reason: expect.stringContaining('creationDate: refused') });
  });

  it('requeue puts them back with their original event ids, below every pending seq, beside a running outbox that sends them', async () => {
    const { o, dir, ids } = await withDeadLetters(50, 20);
    const lanes = new UploadLanes(o.outbox, 'oldest-first');
    // The running outbox's uploader has paged past everything pending.
    const seen: QueueEntry[] = [];
    for (let next = lanes.nextBacklog(() => false); next; next = lanes.nextBacklog(() => false)) seen.push(next);
    expect(seen).toHaveLength(30);

    // Another process (the CLI) on its own connection.
    const other = openDatabase({ dataDir: dir, logger: silentLogger() });
    const r = requeueDeadLetters(other);
    other.close();
    expect(r).toEqual({ requeued: 20, unreadable: [] });

    o.outbox.flush(); // the commit tick notices the other connection's commit
    expect(o.outbox.externalChanges()).toBe(1);
    expect(o.outbox.pendingCount()).toBe(50);
    expect(o.outbox.status().deadLetters).toBe(0);
    expect(rowCount(o.db)).toBe(50);
    const again: QueueEntry[] = [];
    for (let next = lanes.nextBacklog(() => false); next; next = lanes.nextBacklog(() => false)) again.push(next);
    // Everything pending is offered again, the requeued fixes first, each with its original id.
    expect(again.slice(0, 20).map((e) => e.eventId)).toEqual(ids);
    expect(again.slice(0, 20).every((e) => e.seq < 1)).toBe(true);
    expect(new Set(again.map((e) => e.eventId)).size).toBe(50);

    // New fixes keep their own seqs: no collision with the requeued ones.
    o.outbox.record(fixAt(1000));
    o.outbox.flush();
    expect(rowCount(o.db)).toBe(51);
  });

  it('export writes pending and dead-lettered fixes as JSON lines', async () => {
    const { o, ids } = await withDeadLetters(5, 2);
    const pending = [...pendingLines(o.db)];
    const dead = [...deadLetterLines(o.db)];
    expect(pending).toHaveLength(3);
    expect(pending[0]).toMatchObject({ kind: 'pending', eventId: expect.any(String), fixTime: new Date(fixAt(2).time).toISOString() });
    expect(dead.map((d) => d.eventId)).toEqual(ids);
    expect(dead[0]).toMatchObject({ kind: 'dead-letter', status: 400, reason: expect.stringContaining('creationDate'), fix: { lat: 52 } });
  });

  it('a dead letter whose stored fix cannot be read back stays where it is, named', async () => {
    const { o } = await withDeadLetters(3, 1);
    o.db.prepare("UPDATE dead_letter SET fix_json = 'not json'").run();
    const r = requeueDeadLetters(o.db);
    expect(r.requeued).toBe(0);
    expect(r.unreadable).toHaveLength(1);
    expect(r.unreadable[0]!.reason).toMatch(/not JSON/);
  });
});
