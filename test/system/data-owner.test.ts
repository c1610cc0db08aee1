import { chownSync, linkSync, lstatSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { giveToDataDirOwner } from '../../src/system/data-owner.js';
import { tempDir } from '../helpers/tmp.js';

/**
 * Root CLI commands (register, device, location) give agent.db, -wal, -shm and agent.lock to
 * dataDir's owner. dataDir belongs to the service user, so a link in it must never make root give
 * away a file elsewhere. Needs root (only root can chown).
 */
const IS_ROOT = process.getuid?.() === 0;
if (!IS_ROOT) process.stderr.write('skipping the giveToDataDirOwner tests: they need root\n');

const SERVICE = 65534;

function setup(): { dataDir: string; rootFile: string } {
  const dir = tempDir();
  const dataDir = path.join(dir, 'data');
  mkdirSync(dataDir, { mode: 0o700 });
  chownSync(dataDir, SERVICE, SERVICE);
  const rootFile = path.join(dir, 'root-only');
  writeFileSync(rootFile, 'root secret\n', { mode: 0o600 });
  return { dataDir, rootFile };
}

describe.skipIf(!IS_ROOT)('giveToDataDirOwner never follows a link out of dataDir', () => {
  it('a symlink in dataDir to a root-owned file: the file stays root-owned and unchanged', () => {
    const { dataDir, rootFile } = setup();
    const shm = path.join(dataDir, 'agent.db-shm');
    symlinkSync(rootFile, shm);
    const db = path.join(dataDir, 'agent.db');
    writeFileSync(db, '');
    giveToDataDirOwner(dataDir, [db, `${db}-wal`, shm]);
    expect(statSync(rootFile)).toMatchObject({ uid: 0, gid: 0 });
    expect(statSync(rootFile).mode & 0o7777).toBe(0o600);
    expect(readFileSync(rootFile, 'utf8')).toBe('root secret\n');
    expect(lstatSync(shm).isSymbolicLink()).toBe(true);
    // the regular file beside it is still given away
    expect(statSync(db)).toMatchObject({ uid: SERVICE, gid: SERVICE });
  });

  it('a hard link in dataDir to a root-owned file: the file stays root-owned', () => {
    const { dataDir, rootFile } = setup();
    const wal = path.join(dataDir, 'agent.db-wal');
    linkSync(rootFile, wal);
    giveToDataDirOwner(dataDir, [wal]);
    expect(statSync(rootFile)).toMatchObject({ uid: 0, gid: 0 });
  });
});
