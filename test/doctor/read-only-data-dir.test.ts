import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { assessHealth } from '../../src/status/health.js';
import { storeView } from '../../src/status/store-view.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/tmp.js';
import { liveSnapshot } from '../status/fixtures.js';
import { canMountTmpfs, sh } from '../helpers/mount.js';

/**
 * A data directory on a file system mounted read-only: doctor FAILs naming it, and
 * status names it instead of the bare SQLite code. A real tmpfs mounted read-only (root, as in CI).
 */
const CAN_MOUNT = canMountTmpfs('read-only-data-dir.test.ts');

describe.skipIf(!CAN_MOUNT)('a read-only data directory is named, on a real read-only tmpfs', () => {
  function readOnlyDir(): { dir: string; data: string } {
    const dir = tempDir('ta-rodir-');
    const data = path.join(dir, 'data');
    mkdirSync(data);
    expect(sh('mount', ['-t', 'tmpfs', '-o', 'size=1m,ro', 'tmpfs', data])).toBe(true);
    onTestFinished(() => void sh('umount', ['-l', data]));
    return { dir, data };
  }

  it('doctor: FAIL "the data directory\'s filesystem is read-only", exit 1', async () => {
    const { dir, data } = readOnlyDir();
    writeFileSync(path.join(dir, 'pw'), 'x\n', { mode: 0o600 });
    writeFileSync(path.join(dir, 'drive.nmea'), '');
    const cfg = path.join(dir, 'config.json');
    writeFileSync(
      cfg,
      JSON.stringify({
        platform: {
          authUrl: 'http://127.0.0.1:9/api/v1',
          deviceUrl: 'http://127.0.0.1:9/api/public/v2/',
          planningUrl: 'http://127.0.0.1:9',
        },
        credentials: { username: 'agent', passwordFile: path.join(dir, 'pw') },
        device: { externalSystemId: 'ACME', carrierCode: 'C' },
        gnss: { replayFile: path.join(dir, 'drive.nmea') },
        dataDir: data,
      }),
    );
    const r = await runCli(['doctor', '--config', cfg]);
    expect(r.stdout).toMatch(/^FAIL\s+data directory\s+the data directory's filesystem is read-only: /m);
    expect(r.stdout).toMatch(/fix: .*remount,rw/);
    expect(r.code).toBe(1);
  });

  it('status: "outbox cannot commit: the data directory\'s filesystem is read-only (SQLITE_IOERR_WRITE)", FAILING', () => {
    const { data } = readOnlyDir();
    const view = storeView(
      { buffered: 1200, lastCommitError: { code: 'SQLITE_IOERR_WRITE', message: 'disk I/O error' }, commitFailingSinceMonoMs: 0 } as never,
      true,
      180_000,
      data,
    );
    const s = liveSnapshot(Date.now(), data);
    s.disk = { ...s.disk, ...view };
    const h = assessHealth(s);
    expect(h.level).toBe('failing');
    expect(h.reasons).toContain(
      "outbox cannot commit: the data directory's filesystem is read-only (SQLITE_IOERR_WRITE), 1200 fixes held in memory, commits failing for 3 min",
    );
  });
});
