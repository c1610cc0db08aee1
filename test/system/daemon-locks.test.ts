import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { DaemonLocks } from '../../src/system/daemon-locks.js';
import { openReadOnlyDatabase } from '../../src/store/read-only-copy.js';
import { DatabaseReader } from '../../src/store/database-reader.js';
import { openDatabase } from '../../src/store/database.js';
import { silentLogger } from '../../src/log.js';
import { captureLogger } from '../helpers/capture-logger.js';
import { canMountTmpfs, sh } from '../helpers/mount.js';

/**
 * One daemon per data directory on a real tmpfs remounted read-only (root, as in CI): mode bits would not stop root,
 * EROFS does. The locks a read-only card leaves, and its database read as a copy.
 */
const CAN_MOUNT = canMountTmpfs('daemon-locks.test.ts', { remount: true });

function card(): { data: string; run: string; readOnly: (ro: boolean) => void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ta-rolock-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const data = path.join(dir, 'data');
  const run = path.join(dir, 'run');
  mkdirSync(data);
  mkdirSync(run);
  expect(sh('mount', ['-t', 'tmpfs', '-o', 'size=4m,mode=0700', 'tmpfs', data])).toBe(true);
  onTestFinished(() => void sh('umount', ['-l', data]));
  return { data, run, readOnly: (ro) => expect(sh('mount', ['-o', `remount,${ro ? 'ro' : 'rw'}`, data])).toBe(true) };
}

describe.skipIf(!CAN_MOUNT)('one daemon per data directory on a read-only card', () => {
  it('read-only: the runtime directory holds the lock, a second daemon is refused there; writable again: the card lock is taken', () => {
    const { data, run, readOnly } = card();
    readOnly(true);
    const first = DaemonLocks.acquire({ dataDir: data, runDir: run, pid: 1111 });
    onTestFinished(() => first.release());
    expect(first.readOnly).toBe(true);
    expect(readdirSync(run)).toContainEqual(expect.stringMatching(/^agent-[0-9a-f]{16}\.lock$/));
    expect(() => DaemonLocks.acquire({ dataDir: data, runDir: run, pid: 2222 })).toThrow(
      expect.objectContaining({ code: 'AGENT_ALREADY_RUNNING', message: `another agent is running on ${data} (pid 1111)` }),
    );
    expect(first.takeDataDirLock()).toBe(false);

    readOnly(false);
    // A daemon started now on the writable card still meets the first one's runtime lock...
    expect(() => DaemonLocks.acquire({ dataDir: data, runDir: run, pid: 3333 })).toThrow(
      expect.objectContaining({ code: 'AGENT_ALREADY_RUNNING' }),
    );
    // ...and the first takes the card's own lock, which then refuses any other.
    expect(first.takeDataDirLock()).toBe(true);
    expect(first.readOnly).toBe(false);
    expect(() => DaemonLocks.acquire({ dataDir: data, runDir: path.join(run, 'absent'), pid: 4444 })).toThrow(
      expect.objectContaining({ code: 'AGENT_ALREADY_RUNNING', message: `another agent is running on ${data} (pid 1111)` }),
    );
  });

  it('a daemon that took the card while writable still refuses a second one after the card went read-only, with no shared runtime directory', () => {
    const { data, run } = card();
    const first = DaemonLocks.acquire({ dataDir: data, runDir: run, pid: 5555 });
    onTestFinished(() => first.release());
    expect(first.readOnly).toBe(false);
    // The card as a read-only mount while the first holds its lock open for writing (a remount of
    // the card itself is refused while a file is open for writing; ext4's error remount is not).
    const view = `${data}-view`;
    mkdirSync(view);
    expect(sh('mount', ['--bind', data, view])).toBe(true);
    onTestFinished(() => void sh('umount', ['-l', view]));
    expect(sh('mount', ['-o', 'remount,bind,ro', view])).toBe(true);
    expect(() => DaemonLocks.acquire({ dataDir: view, runDir: path.join(run, 'absent'), pid: 6666 })).toThrow(
      expect.objectContaining({ code: 'AGENT_ALREADY_RUNNING' }),
    );
  });

  it('read-only with no writable runtime directory: runs, and warns that nothing keeps a second daemon away', () => {
    const { data, run, readOnly } = card();
    readOnly(true);
    const log = captureLogger();
    const locks = DaemonLocks.acquire({ dataDir: data, runDir: path.join(run, 'absent'), logger: log.logger });
    onTestFinished(() => locks.release());
    expect(locks.readOnly).toBe(true);
    expect(log.text()).toMatch(/nothing keeps a second agent from starting on it/);
  });

  it('a database closed cleanly (no -wal, no -shm) reads as a copy: registration and outbox there, every write SQLITE_READONLY', () => {
    const { data, readOnly } = card();
    const db = openDatabase({ dataDir: data, logger: silentLogger() });
    db.prepare(
      "INSERT INTO device_registration (id, external_system_id, external_device_id, device_uuid, config_hash, response_json, registered_at) VALUES (1, 'acme', 'gw-1', 'uuid-1', 'h', '{}', 1)",
    ).run();
    db.close();
    readOnly(true);
    // What SQLite alone says: a read-only connection to a WAL database needs the -shm it cannot make.
    const plain = new BetterSqlite3(path.join(data, 'agent.db'), { readonly: true, fileMustExist: true });
    expect(() => plain.prepare('SELECT count(*) FROM sqlite_master').get()).toThrow(expect.objectContaining({ code: 'SQLITE_CANTOPEN' }));
    plain.close();

    const store = DatabaseReader.open(data)!;
    expect(store.registration()).toMatchObject({ externalDeviceId: 'gw-1', deviceUUID: 'uuid-1' });
    store.close();
    const copy = openReadOnlyDatabase(data, silentLogger());
    onTestFinished(() => {
      copy.db.close();
    });
    expect(copy.source).toBe('file');
    expect(copy.db.prepare('SELECT device_uuid AS u FROM device_registration').get()).toEqual({ u: 'uuid-1' });
    expect(() => copy.db.prepare('DELETE FROM device_registration').run()).toThrow(expect.objectContaining({ code: 'SQLITE_READONLY' }));
  });

  it('an empty read-only card gives the empty schema, read-only', () => {
    const { data, readOnly } = card();
    readOnly(true);
    const copy = openReadOnlyDatabase(data, silentLogger());
    onTestFinished(() => {
      copy.db.close();
    });
    expect(copy.source).toBe('empty');
    expect(copy.db.prepare('SELECT count(*) AS n FROM outbox').get()).toEqual({ n: 0 });
    expect(() => copy.db.prepare("INSERT INTO meta (key, value) VALUES ('a', 'b')").run()).toThrow(
      expect.objectContaining({ code: 'SQLITE_READONLY' }),
    );
  });
});
