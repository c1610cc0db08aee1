import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, writeSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { LOW_DISK_META_KEY } from '../../src/store/outbox/bound.js';
import { databasePath, openDatabase, replaceDamagedDatabase, type Database } from '../../src/store/database.js';
import { formatUuid } from '../../src/store/event-id.js';
import { MetaStore } from '../../src/store/meta.js';
import { readByRanges, SALVAGE_META_KEY, type SalvageFacts } from '../../src/store/salvage.js';
import { StoreError, type StoreFaultKind } from '../../src/errors.js';
import { seededRandom } from '../../src/sim/random.js';
import { tempDir } from '../helpers/tmp.js';
import { fixAt, openOutbox } from './outbox/helpers.js';

const N = 6000;
const DEAD = 40;
const LOW_DISK_FACTS = JSON.stringify({ bound: 2048, freeBytes: 1048576, floor: 209715200 });
const HAVE_SQLITE3 = spawnSync('sh', ['-c', 'command -v sqlite3']).status === 0;

interface Built {
  dir: string;
  file: string;
  /** seq -> event id of every queued fix. */
  ids: Map<number, string>;
  pages: { name: string; pageno: number; pagetype: string; ncell: number }[];
  pageSize: number;
}

/** A database of the agent's schema holding N pending fixes, DEAD dead letters and a token pair, checkpointed into the main file. */
async function build(): Promise<Built> {
  const dir = tempDir();
  const { db, outbox } = await openOutbox(dir);
  for (let i = 0; i < N + DEAD; i++) outbox.record(fixAt(i));
  outbox.flush({ final: true });
  for (const e of outbox.after(0, DEAD)) outbox.deadLetter(e, 400, 'refused');
  outbox.flush({ final: true });
  await outbox.stop();
  db.prepare(
    "INSERT INTO token_pair (id, access_token, refresh_token, token_type, expires_in_s, obtained_at, generation) VALUES (1, 'a', 'r', 'Bearer', 3600, 0, 1)",
  ).run();
  db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)').run(LOW_DISK_META_KEY, LOW_DISK_FACTS);
  const ids = new Map(
    (db.prepare('SELECT seq, event_id FROM outbox').all() as { seq: number; event_id: Buffer }[]).map((r) => [
      r.seq,
      formatUuid(r.event_id),
    ]),
  );
  const pages = db.prepare('SELECT name, pageno, pagetype, ncell FROM dbstat ORDER BY pageno').all() as Built['pages'];
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return { dir, file: databasePath(dir), ids, pages, pageSize };
}

function overwrite(file: string, offset: number, length: number, seed: number): void {
  const random = seededRandom(seed);
  const garbage = Buffer.from(Array.from({ length }, () => Math.floor(random() * 256)));
  const fd = openSync(file, 'r+');
  writeSync(fd, garbage, 0, length, offset);
  closeSync(fd);
}

function overwritePages(b: Built, pagenos: number[]): void {
  pagenos.forEach((p, i) => overwrite(b.file, (p - 1) * b.pageSize, b.pageSize, 100 + i));
}

/** The fresh database's outbox as seq -> event id, and the salvage facts in its meta. */
function salvaged(db: Database): { rows: Map<number, string>; facts: SalvageFacts } {
  const rows = new Map(
    (db.prepare('SELECT seq, event_id FROM outbox').all() as { seq: number; event_id: Buffer }[]).map((r) => [
      r.seq,
      formatUuid(r.event_id),
    ]),
  );
  return { rows, facts: new MetaStore(db).getJson<SalvageFacts>(SALVAGE_META_KEY)! };
}

function expectOriginalIds(b: Built, rows: Map<number, string>): void {
  for (const [seq, id] of rows) expect(b.ids.get(seq)).toBe(id);
}

/** Rows the sqlite3 CLI's .recover gets back into the outbox table, for comparison (where installed). */
function recoverCount(file: string): number | undefined {
  if (!HAVE_SQLITE3) return undefined;
  const out = `${file}.recovered`;
  // Debian 12's sqlite3 3.40.1 is built without sqlite_dbpage, so its .recover fails ("SQL logic
  // error") even on an intact file: then there is nothing to compare with.
  const r = spawnSync(
    'sh',
    ['-c', `sqlite3 '${file}' .recover 2>&1 >'${out}.sql' | grep -q 'sql error' && exit 3; sqlite3 '${out}' <'${out}.sql'`],
    {
      stdio: 'ignore',
    },
  );
  if (r.status !== 0 || !existsSync(out)) return undefined;
  const db = new BetterSqlite3(out, { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM outbox').get() as { n: number }).n;
  } catch {
    return 0;
  } finally {
    db.close();
  }
}

function report(name: string, b: Built, rows: number, cli: number | undefined): void {
  const share = ((100 * rows) / b.ids.size).toFixed(1);
  const vs = cli === undefined ? '' : `; sqlite3 .recover: ${cli} (${((100 * cli) / b.ids.size).toFixed(1)}%)`;
  console.log(`salvage, ${name}: ${rows} of ${b.ids.size} pending fixes (${share}%)${vs}`);
}

describe('salvage of a damaged database (real damage)', () => {
  it('a damaged header: moved aside at open and every row salvaged, with its seq and event id', async () => {
    const b = await build();
    overwrite(b.file, 0, 100, 1);
    const faults: StoreFaultKind[] = [];
    const db = openDatabase({ dataDir: b.dir, logger: silentLogger(), onFault: (k) => faults.push(k) });
    const { rows, facts } = salvaged(db);
    report('header (first 100 bytes)', b, rows.size, undefined);
    expect(rows.size).toBe(b.ids.size);
    expectOriginalIds(b, rows);
    expect(facts).toMatchObject({ schemaReadable: true, outbox: { rows: b.ids.size, unreadable: 0 }, deadLetters: { rows: DEAD } });
    expect(facts.reason).toMatch(/SQLITE_NOTADB/);
    expect(existsSync(facts.movedTo)).toBe(true);
    // The bound set below the free-disk floor is carried: the fresh file is not sized afresh.
    expect(db.prepare('SELECT value FROM meta WHERE key = ?').get(LOW_DISK_META_KEY)).toEqual({ value: LOW_DISK_FACTS });
    // Tokens and device tables are rebuilt empty: one password grant follows.
    expect(db.prepare('SELECT count(*) AS n FROM token_pair').get()).toEqual({ n: 0 });
    db.close();
  });

  it('damaged token pages: the token read raises STORE_CORRUPT, the salvage keeps every fix', async () => {
    const b = await build();
    overwritePages(
      b,
      b.pages.filter((p) => p.name === 'token_pair').map((p) => p.pageno),
    );
    const faults: StoreFaultKind[] = [];
    const db = openDatabase({ dataDir: b.dir, logger: silentLogger(), onFault: (k) => faults.push(k) });
    let error: unknown;
    try {
      db.prepare('SELECT access_token FROM token_pair WHERE id = 1').get();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).code).toBe('STORE_CORRUPT');
    expect(faults).toEqual(['corrupt']);
    db.close();
    const fresh = replaceDamagedDatabase({ dataDir: b.dir, logger: silentLogger() }, 'SQLITE_CORRUPT: token read');
    const { rows, facts } = salvaged(fresh);
    report('token_pair pages', b, rows.size, recoverCount(facts.movedTo));
    expect(rows.size).toBe(b.ids.size);
    expectOriginalIds(b, rows);
    fresh.close();
  });

  it('damaged outbox leaf pages: only the rows of those pages are lost', async () => {
    const b = await build();
    const leaves = b.pages.filter((p) => p.name === 'outbox' && p.pagetype === 'leaf');
    const hit = [0.2, 0.5, 0.8].map((f) => leaves[Math.floor(leaves.length * f)]!);
    overwritePages(
      b,
      hit.map((p) => p.pageno),
    );
    const onPages = hit.reduce((n, p) => n + p.ncell, 0);
    const fresh = replaceDamagedDatabase({ dataDir: b.dir, logger: silentLogger() }, 'SQLITE_CORRUPT: outbox read');
    const { rows, facts } = salvaged(fresh);
    report(`3 outbox leaf pages (${onPages} rows on them)`, b, rows.size, recoverCount(facts.movedTo));
    expect(rows.size).toBe(b.ids.size - onPages);
    expect(facts.outbox.unreadable).toBeGreaterThanOrEqual(onPages);
    expectOriginalIds(b, rows);
    fresh.close();
  });

  it('header, token and outbox pages at once; an interior outbox page loses its subtree, reported', async () => {
    const b = await build();
    const outbox = b.pages.filter((p) => p.name === 'outbox');
    const interior = outbox.filter((p) => p.pagetype === 'internal' && p.pageno !== Math.min(...outbox.map((q) => q.pageno)));
    const leaves = outbox.filter((p) => p.pagetype === 'leaf');
    overwrite(b.file, 0, 100, 2);
    overwritePages(b, [
      ...b.pages.filter((p) => p.name === 'token_pair').map((p) => p.pageno),
      leaves[Math.floor(leaves.length / 3)]!.pageno,
      ...(interior.length > 0 ? [interior[Math.floor(interior.length / 2)]!.pageno] : []),
    ]);
    const db = openDatabase({ dataDir: b.dir, logger: silentLogger() });
    const { rows, facts } = salvaged(db);
    report('header + token page + leaf + interior page', b, rows.size, recoverCount(facts.movedTo));
    expect(rows.size).toBeGreaterThan(b.ids.size / 2);
    expect(rows.size).toBeLessThan(b.ids.size);
    expectOriginalIds(b, rows);
    db.close();
  });

  it('keeps only the newest two damaged files', async () => {
    const b = await build();
    let t = Date.UTC(2026, 0, 1);
    for (let i = 0; i < 4; i++) {
      overwrite(b.file, 0, 100, 10 + i);
      openDatabase({ dataDir: b.dir, logger: silentLogger(), clock: { wallMs: () => (t += 60_000) } }).close();
    }
    expect(readdirSync(b.dir).filter((n) => n.startsWith('agent.db.corrupt-') && !/-(wal|shm)$/.test(n))).toHaveLength(2);
  });

  it('bisects around unreadable seqs', () => {
    const bad = new Set([5, 6, 40]);
    const read = (a: number, b: number): number[] => {
      for (const x of bad) if (x >= a && x <= b) throw Object.assign(new Error('malformed'), { code: 'SQLITE_CORRUPT' });
      return Array.from({ length: b - a + 1 }, (_, i) => a + i);
    };
    const r = readByRanges(1, 64, read);
    expect(r.rows).toEqual(Array.from({ length: 64 }, (_, i) => i + 1).filter((x) => !bad.has(x)));
    expect(r.unreadable).toBe(3);
  });
});
