import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { InstanceLock, LOCK_FILE, readHolderPid } from '../../src/system/instance-lock.js';
import { captureLogger } from '../helpers/capture-logger.js';
import { tempDir } from '../helpers/tmp.js';

function acquire(dataDir: string, pid: number, logger = captureLogger().logger): InstanceLock {
  const lock = InstanceLock.acquire(dataDir, { pid, logger });
  onTestFinished(() => lock.release());
  return lock;
}

/** A lock file as a previous start left it, holding `pid`. */
function intactLockBytes(pid: number): Buffer {
  const dir = tempDir();
  const db = new BetterSqlite3(path.join(dir, 'x'));
  db.pragma(`user_version = ${pid}`);
  db.close();
  return readFileSync(path.join(dir, 'x'));
}

describe('InstanceLock: a lock file damaged by a power cut does not stop the agent for good', () => {
  for (const [what, bytes] of [
    ['garbage', () => Buffer.from('garbage, not a database\n'.repeat(20))],
    ['a header cut short', () => intactLockBytes(4242).subarray(0, 30)],
    ['a page size destroyed', () => intactLockBytes(4242).fill(0xff, 16, 18)],
  ] as const) {
    it(`${what}: emptied, taken, with a warning; a second agent is still refused`, () => {
      const dataDir = tempDir();
      const file = path.join(dataDir, LOCK_FILE);
      writeFileSync(file, bytes());
      const log = captureLogger();
      acquire(dataDir, 1234, log.logger);
      expect(readHolderPid(file)).toBe(1234);
      expect(log.text()).toMatch(/"level":"warn".*the lock file was damaged/);
      expect(() => InstanceLock.acquire(dataDir, { pid: 5678 })).toThrow(
        expect.objectContaining({ code: 'AGENT_ALREADY_RUNNING', message: `another agent is running on ${dataDir} (pid 1234)` }),
      );
    });
  }

  it('an intact lock file is taken without a warning', () => {
    const dataDir = tempDir();
    writeFileSync(path.join(dataDir, LOCK_FILE), intactLockBytes(99));
    const log = captureLogger();
    acquire(dataDir, 1234, log.logger);
    expect(readHolderPid(path.join(dataDir, LOCK_FILE))).toBe(1234);
    expect(log.text()).toBe('');
  });

  it('a damaged file a symlink points at is never emptied: the error stays', () => {
    const dir = tempDir();
    const outside = path.join(dir, 'somebody-elses-file');
    writeFileSync(outside, 'not a database, and not ours\n'.repeat(20));
    const dataDir = tempDir();
    symlinkSync(outside, path.join(dataDir, LOCK_FILE));
    expect(() => InstanceLock.acquire(dataDir, { pid: 1234 })).toThrow(expect.objectContaining({ code: 'DATA_DIR_UNUSABLE' }));
    expect(readFileSync(outside, 'utf8')).toBe('not a database, and not ours\n'.repeat(20));
  });
});
