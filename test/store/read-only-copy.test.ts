import { describe, expect, it, onTestFinished } from 'vitest';
import { silentLogger } from '../../src/log.js';
import BetterSqlite3 from 'better-sqlite3';
import { databasePath, openDatabase } from '../../src/store/database.js';
import { LATEST_VERSION, migrate } from '../../src/store/migrations.js';
import { openReadOnlyDatabase } from '../../src/store/read-only-copy.js';
import { tempDir } from '../helpers/tmp.js';

function register(db: BetterSqlite3.Database): void {
  db.prepare(
    "INSERT INTO device_registration (id, external_system_id, external_device_id, device_uuid, config_hash, response_json, registered_at) VALUES (1, 'acme', 'gw-1', 'uuid-1', 'h', '{}', 1)",
  ).run();
}

describe('the read-only copy of the database', () => {
  it('a file with the current schema and a live WAL is opened read-only as it is, with what the WAL holds', () => {
    const data = tempDir('ta-rocopy-');
    const db = openDatabase({ dataDir: data, logger: silentLogger() });
    onTestFinished(() => {
      db.close();
    });
    register(db);
    // Still open: the registration is in the -wal, the header says WAL.
    const copy = openReadOnlyDatabase(data, silentLogger());
    onTestFinished(() => {
      copy.db.close();
    });
    expect(copy.source).toBe('file');
    expect(copy.db.pragma('user_version', { simple: true })).toBe(LATEST_VERSION);
    expect(copy.db.prepare('SELECT device_uuid AS u FROM device_registration').get()).toEqual({ u: 'uuid-1' });
    expect(() => copy.db.prepare('DELETE FROM device_registration').run()).toThrow(expect.objectContaining({ code: 'SQLITE_READONLY' }));
  });

  it('a file from an older agent is migrated in the copy and the card is not touched', () => {
    const data = tempDir('ta-rocopy-');
    // As an older agent left it: one migration short, closed cleanly (no -wal, no -shm).
    const db = new BetterSqlite3(databasePath(data));
    db.pragma('journal_mode = WAL');
    migrate(db, LATEST_VERSION - 1);
    register(db);
    db.close();
    const copy = openReadOnlyDatabase(data, silentLogger());
    onTestFinished(() => {
      copy.db.close();
    });
    expect(copy.source).toBe('file');
    expect(copy.db.pragma('user_version', { simple: true })).toBe(LATEST_VERSION);
    expect(copy.db.prepare('SELECT device_uuid AS u FROM device_registration').get()).toEqual({ u: 'uuid-1' });
    expect(() => copy.db.prepare('DELETE FROM device_registration').run()).toThrow(expect.objectContaining({ code: 'SQLITE_READONLY' }));
    // The card's file is as it was.
    const file = new BetterSqlite3(databasePath(data), { readonly: true });
    onTestFinished(() => {
      file.close();
    });
    expect(file.pragma('user_version', { simple: true })).toBe(LATEST_VERSION - 1);
  });
});
