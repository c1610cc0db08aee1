import { closeSync, openSync, writeSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { requestSnapshot } from '../../src/status/status-client.js';
import type { StatusSnapshot } from '../../src/status/snapshot.js';
import { startReplayDaemon } from './daemon.js';
import { waitFor } from '../helpers/wait.js';

/**
 * A database damaged under a running daemon is salvaged by swapping the store under the
 * components: the receiver, the platform (tokens, registration) and the uploader go on as they
 * were. The damage is in the counters table, which the daemon writes once a minute: the test's own
 * commit elsewhere makes the daemon read its pages from the file again.
 */
describe('a salvage at run time swaps only the database', () => {
  it('every fix delivered once, no second password grant, no second registration, one start', { timeout: 300_000 }, async () => {
    const { dir, sim, daemon, socket } = await startReplayDaemon({
      prefix: 'ta-runsalvage-',
      sim: { users: [{ username: 'agent', password: 'pw' }], seed: 5 },
      drive: { minutes: 2, hz: 10, seed: 12 },
      replaySpeed: 1,
      ready: false,
      stopSignal: 'SIGKILL',
    });
    let last: StatusSnapshot | undefined;
    const status = async (): Promise<StatusSnapshot | undefined> => {
      if (daemon.child.exitCode !== null) throw new Error(`daemon exited ${daemon.child.exitCode}\n${daemon.log().slice(-3000)}`);
      last = (await requestSnapshot(socket, 1000).catch(() => undefined)) ?? last;
      return last;
    };
    await waitFor('fixes delivered', () => sim.events.size > 50, { timeoutMs: 60_000, detail: daemon.log });
    const grants = sim.stats.passwordGrants;
    const upserts = sim.stats.devicesCreated + sim.stats.devicesUpdated;
    // A backlog in the file when it is damaged: the salvage carries it, the same uploader sends it.
    sim.setFaults('events', { status503Rate: 1 });
    await waitFor('a backlog committed', async () => ((await status())?.outbox.pending ?? 0) > 100, {
      timeoutMs: 60_000,
      detail: daemon.log,
    });

    damageCounters(path.join(dir, 'data', 'agent.db'));
    await waitFor('the salvage at run time', () => /database damaged at run time/.test(daemon.log()), {
      timeoutMs: 120_000,
      detail: daemon.log,
    });
    sim.setFaults('events', undefined);
    await waitFor(
      'the drive to end and the queue to drain',
      async () => {
        const s = await status();
        return s !== undefined && s.receiver?.link === 'ended' && s.outbox.pending === 0;
      },
      { timeoutMs: 180_000, detail: daemon.log },
    );
    const log = daemon.log();
    const s = last!;
    const figures = `run-time salvage: recorded ${s.outbox.recorded ?? '?'}, delivered ${sim.events.size}, duplicates ${sim.stats.duplicates}, password grants +${sim.stats.passwordGrants - grants}, upserts +${sim.stats.devicesCreated + sim.stats.devicesUpdated - upserts}, salvaged ${s.disk.repaired?.salvaged ?? '?'}`;
    process.stderr.write(`${figures}\n`);
    expect(log).toMatch(/database file is damaged \(corrupt\): moved it aside and salvaged/);
    expect(s.disk.repaired?.salvaged ?? 0, figures).toBeGreaterThan(0);
    // One start of the components: the platform and the uploader were not built again.
    expect(log.match(/"msg":"agent running"/g), figures).toHaveLength(1);
    expect(log.match(/"msg":"device registered: uploading queued fixes"/g), figures).toHaveLength(1);
    expect(sim.stats.passwordGrants - grants, figures).toBe(0);
    expect(sim.stats.devicesCreated + sim.stats.devicesUpdated - upserts, figures).toBe(0);
    expect(sim.stats.duplicates, figures).toBe(0);
    expect(sim.events.size, figures).toBe(s.outbox.recorded);
    // The pair in use and the registration are in the fresh file: the next start neither grants nor upserts.
    daemon.child.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);
    const db = new BetterSqlite3(path.join(dir, 'data', 'agent.db'), { readonly: true });
    try {
      expect(db.prepare('SELECT count(*) AS n FROM token_pair').get()).toEqual({ n: 1 });
      expect(db.prepare('SELECT count(*) AS n FROM device_registration').get()).toEqual({ n: 1 });
    } finally {
      db.close();
    }
  });
});

/** Garbage over the counters table's pages, then a commit elsewhere so that the daemon's page cache is dropped. */
function damageCounters(file: string): void {
  const db = new BetterSqlite3(file, { timeout: 5000 });
  try {
    const size = db.pragma('page_size', { simple: true }) as number;
    const pages = (db.prepare("SELECT pageno FROM dbstat WHERE name = 'counters'").all() as { pageno: number }[]).map((r) => r.pageno);
    expect(pages.length).toBeGreaterThan(0);
    // The pages must be read from the file, not the WAL: checkpoint it away first.
    for (let i = 0; i < 50; i++) {
      const r = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
      if (r[0]?.busy === 0) break;
    }
    const fd = openSync(file, 'r+');
    for (const p of pages) writeSync(fd, Buffer.alloc(size, 0xa5), 0, size, (p - 1) * size);
    closeSync(fd);
    db.prepare('UPDATE device_registration SET registered_at = registered_at').run();
  } finally {
    db.close();
  }
}
