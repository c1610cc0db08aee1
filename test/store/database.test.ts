import { existsSync, readdirSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { databasePath, openDatabase } from '../../src/store/database.js';
import { LATEST_VERSION, MIGRATIONS, migrate } from '../../src/store/migrations.js';
import { MetaStore } from '../../src/store/meta.js';
import { tempDir } from '../helpers/tmp.js';

function captureLogger() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  return { logger: createLogger({ destination, level: 'debug' }), lines };
}

const mode = (p: string) => statSync(p).mode & 0o777;

describe('state database', () => {
  it('creates the data directory 0700 and the database files 0600, with WAL, FULL sync and foreign keys', () => {
    const dataDir = path.join(tempDir(), 'nested', 'data');
    const { logger } = captureLogger();
    const db = openDatabase({ dataDir, logger });
    db.prepare("INSERT INTO meta (key, value) VALUES ('k', 'v')").run();
    expect(mode(dataDir)).toBe(0o700);
    for (const f of ['agent.db', 'agent.db-wal', 'agent.db-shm']) expect(mode(path.join(dataDir, f))).toBe(0o600);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(2); // FULL
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.pragma('user_version', { simple: true })).toBe(LATEST_VERSION);
    db.close();
  });

  it('sets synchronous=FULL again on a second open (better-sqlite3 defaults WAL databases to NORMAL)', () => {
    const dataDir = tempDir();
    const { logger } = captureLogger();
    openDatabase({ dataDir, logger }).close();
    const db = openDatabase({ dataDir, logger });
    expect(db.pragma('synchronous', { simple: true })).toBe(2);
    db.close();
  });

  it.each([
    ['a garbage file', (f: string) => writeFileSync(f, Buffer.alloc(8192, 0x5a))],
    ['a truncated database', (f: string) => truncateSync(f, 1500)],
    ['a text file', (f: string) => writeFileSync(f, 'this is not a database\n'.repeat(200))],
  ])('moves %s aside, starts fresh and logs where the old file is', (_name, damage) => {
    const dataDir = tempDir();
    const quiet = captureLogger();
    const first = openDatabase({ dataDir, logger: quiet.logger });
    const meta = new MetaStore(first);
    for (let i = 0; i < 500; i++) meta.set(`k${i}`, 'x'.repeat(100));
    first.pragma('wal_checkpoint(TRUNCATE)');
    first.close();
    damage(databasePath(dataDir));

    const { logger, lines } = captureLogger();
    const db = openDatabase({ dataDir, logger, clock: { wallMs: () => Date.parse('2026-11-22T10:00:00Z') } });
    expect(new MetaStore(db).get('k1')).toBeUndefined();
    db.prepare("INSERT INTO meta (key, value) VALUES ('fresh', '1')").run();
    db.close();

    const aside = path.join(dataDir, 'agent.db.corrupt-2026-11-22T10-00-00-000Z');
    expect(existsSync(aside)).toBe(true);
    const err = lines.find((l) => l.level === 'error');
    expect(err?.msg).toMatch(/corrupt/);
    expect(err?.movedTo).toBe(aside);
    expect(readdirSync(dataDir).filter((f) => f.startsWith('agent.db.corrupt'))).toContain('agent.db.corrupt-2026-11-22T10-00-00-000Z');
  });

  it('refuses a database from a newer agent instead of guessing', () => {
    const dataDir = tempDir();
    const { logger } = captureLogger();
    openDatabase({ dataDir, logger }).close();
    const raw = new BetterSqlite3(databasePath(dataDir));
    raw.pragma(`user_version = ${LATEST_VERSION + 1}`);
    raw.close();
    expect(() => openDatabase({ dataDir, logger })).toThrow(/newer than this agent knows/);
  });
});

describe('migrations', () => {
  const tablesOf = (db: BetterSqlite3.Database) =>
    (
      db
        .prepare("SELECT name, sql FROM sqlite_master WHERE type IN ('table','index') AND name NOT LIKE 'sqlite_%' ORDER BY name")
        .all() as { name: string; sql: string }[]
    ).map((r) => `${r.name}: ${r.sql}`);

  it('versions are 1..N without gaps', () => {
    expect(MIGRATIONS.map((m) => m.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
  });

  it('migrates an empty database to the latest version with every table the agent needs', () => {
    const db = new BetterSqlite3(':memory:');
    expect(migrate(db)).toEqual({ from: 0, to: LATEST_VERSION });
    const names = tablesOf(db).map((t) => t.split(':')[0]);
    for (const t of ['meta', 'counters', 'token_pair', 'device_identity', 'device_registration', 'outbox', 'dead_letter'])
      expect(names).toContain(t);
    expect(migrate(db)).toEqual({ from: LATEST_VERSION, to: LATEST_VERSION });
  });

  it.each(MIGRATIONS.map((m) => m.version).filter((v) => v < LATEST_VERSION))(
    'migrates a version-%i database (with data) to the same schema as a fresh one',
    (version) => {
      const fresh = new BetterSqlite3(':memory:');
      migrate(fresh);
      const old = new BetterSqlite3(':memory:');
      migrate(old, version);
      expect(old.pragma('user_version', { simple: true })).toBe(version);
      old.prepare("INSERT INTO meta (key, value) VALUES ('kept', 'yes')").run();
      migrate(old);
      expect(old.pragma('user_version', { simple: true })).toBe(LATEST_VERSION);
      expect(tablesOf(old)).toEqual(tablesOf(fresh));
      expect(new MetaStore(old).get('kept')).toBe('yes');
    },
  );
});

describe('meta store', () => {
  it('keeps facts and counters across reopen', () => {
    const dataDir = tempDir();
    const { logger } = captureLogger();
    let db = openDatabase({ dataDir, logger });
    let m = new MetaStore(db);
    m.setJson('lastUpload', { at: 1 });
    m.increment('sent', 3);
    m.increment('sent');
    db.close();
    db = openDatabase({ dataDir, logger });
    m = new MetaStore(db);
    expect(m.getJson('lastUpload')).toEqual({ at: 1 });
    expect(m.counter('sent')).toBe(4);
    expect(m.counter('never')).toBe(0);
    expect(m.counters()).toEqual({ sent: 4 });
    m.delete('lastUpload');
    expect(m.get('lastUpload')).toBeUndefined();
    db.close();
  });
});
