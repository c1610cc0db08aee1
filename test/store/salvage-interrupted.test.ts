import { existsSync, renameSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { databasePath, openDatabase, replaceDamagedDatabase, salvagingPath } from '../../src/store/database.js';
import { buildDamagedDatabase } from '../../bench/salvage-rig.js';
import { tempDir } from '../helpers/tmp.js';

function rows(db: { prepare(sql: string): { get(): unknown } }): number {
  return (db.prepare('SELECT count(*) AS n FROM outbox').get() as { n: number }).n;
}

/**
 * A salvage of a large file takes seconds to minutes: a power cut or a kill in the middle of it
 * must not leave an empty agent.db beside a damaged file nobody salvages again (the backlog lost).
 */
describe('a salvage cut off in the middle', () => {
  it('leaves the damaged file as agent.db, and the next start salvages it whole', () => {
    const dir = tempDir('ta-salvage-cut-');
    const size = buildDamagedDatabase(dir, 30_000);
    let chunks = 0;
    expect(() =>
      replaceDamagedDatabase(
        {
          dataDir: dir,
          logger: silentLogger(),
          onProgress: () => {
            if (++chunks === 2) throw new Error('killed');
          },
        },
        'SQLITE_CORRUPT: test',
      ),
    ).toThrow('killed');
    expect(statSync(databasePath(dir)).size).toBe(size);

    // The next run meets the same damage and salvages again, the whole file.
    const db = replaceDamagedDatabase({ dataDir: dir, logger: silentLogger() }, 'SQLITE_CORRUPT: test');
    expect(rows(db)).toBeGreaterThan(29_900);
    db.close();
    expect(existsSync(salvagingPath(databasePath(dir)))).toBe(false);
  });

  it('a salvage finished but not yet in place is the database the next start opens', () => {
    const dir = tempDir('ta-salvage-cut-');
    buildDamagedDatabase(dir, 5_000, []);
    const file = databasePath(dir);
    // As a cut between the two renames leaves it: no agent.db, the finished salvage beside it.
    renameSync(file, salvagingPath(file));
    const db = openDatabase({ dataDir: dir, logger: silentLogger() });
    expect(rows(db)).toBe(5_000);
    db.close();
  });
});
