import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it, onTestFinished } from 'vitest';
import { PlatformSimulator } from '../../src/sim/index.js';
import { driveText, generateDrive } from '../../src/sim/receiver/index.js';
import { requestSnapshot } from '../../src/status/status-client.js';
import { assessHealth } from '../../src/status/health.js';
import type { StatusSnapshot } from '../../src/status/snapshot.js';
import { committedOutbox, startDaemon, writeConfig, type Daemon, stopWhenFinished } from './daemon.js';
import { waitFor } from '../helpers/wait.js';

/**
 * A salvage with the real daemon: a backlog is queued while the platform refuses events, the
 * database file is damaged while the daemon is down, and the next run salvages it and delivers
 * every salvaged fix once, under its original event id. A damaged header is found at open; damaged
 * token pages only when the token is read, at run time.
 */
type Damage = (file: string) => void;

function garbage(file: string, offset: number, length: number): void {
  const fd = openSync(file, 'r+');
  writeSync(fd, Buffer.alloc(length, 0xa5), 0, length, offset);
  closeSync(fd);
}

const header: Damage = (file) => garbage(file, 0, 100);
const tokenPages: Damage = (file) => {
  const db = new BetterSqlite3(file, { readonly: true });
  const size = db.pragma('page_size', { simple: true }) as number;
  const pages = (db.prepare("SELECT pageno FROM dbstat WHERE name = 'token_pair'").all() as { pageno: number }[]).map((r) => r.pageno);
  db.close();
  expect(pages.length).toBeGreaterThan(0);
  for (const p of pages) garbage(file, (p - 1) * size, size);
};

describe('a damaged database is salvaged and its fixes delivered once', () => {
  for (const [name, damage, when] of [
    ['a damaged header', header, 'at open'],
    ['damaged token pages', tokenPages, 'at the token read'],
  ] as const) {
    it(`${name} (found ${when})`, { timeout: 180_000 }, async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'ta-salvage-'));
      onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
      const sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'pw' }], seed: 3 });
      const urls = await sim.start();
      onTestFinished(() => sim.stop());
      const socket = path.join(dir, 'status.sock');
      const run = (d: Daemon) => {
        stopWhenFinished(d, 'SIGKILL');
        return async (): Promise<StatusSnapshot | undefined> => {
          if (d.child.exitCode !== null) throw new Error(`daemon exited ${d.child.exitCode}\n${d.log().slice(-3000)}`);
          return requestSnapshot(socket, 1000).catch(() => undefined);
        };
      };

      // 1. A backlog: the drive is recorded while the platform refuses every event.
      sim.setFaults('events', { status503Rate: 1 });
      const drive = path.join(dir, 'drive.nmea');
      writeFileSync(drive, driveText(generateDrive({ minutes: 2, hz: 10, seed: 9 })));
      const first = startDaemon(dir, writeConfig({ dir, urls, gnss: { replayFile: drive, replaySpeed: 0 } }));
      const status1 = run(first);
      await waitFor(
        'the backlog',
        async () => {
          const s = await status1();
          return s !== undefined && s.receiver?.link === 'ended' && s.outbox.pending === s.outbox.recorded && s.outbox.pending > 0;
        },
        { timeoutMs: 90_000, detail: first.log },
      );
      first.child.kill('SIGTERM');
      expect((await first.exited).code).toBe(0);
      const queued = committedOutbox(dir);
      expect(queued.length).toBeGreaterThan(500);
      const grantsBefore = sim.stats.passwordGrants;

      // 2. Damage, then a run with nothing new to record and the platform accepting.
      damage(path.join(dir, 'data', 'agent.db'));
      sim.setFaults('events', undefined);
      const empty = path.join(dir, 'empty.nmea');
      writeFileSync(empty, '');
      const second = startDaemon(dir, writeConfig({ dir, urls, gnss: { replayFile: empty, replaySpeed: 0 } }));
      const status2 = run(second);
      let last: StatusSnapshot | undefined;
      await waitFor(
        'the salvaged backlog delivered',
        async () => {
          last = await status2();
          return last !== undefined && last.disk.repaired !== undefined && last.outbox.pending === 0 && sim.events.size >= queued.length;
        },
        { timeoutMs: 120_000, detail: second.log },
      );
      const delivered = new Set(sim.events.keys());
      const lost = queued.filter((q) => !delivered.has(q.id)).length;
      console.log(
        `salvage e2e, ${name}: queued ${queued.length}, salvaged ${last!.disk.repaired!.salvaged}, delivered ${delivered.size}, duplicates ${sim.stats.duplicates}, lost ${lost}, password grants +${sim.stats.passwordGrants - grantsBefore}`,
      );
      // Every queued fix arrives under its original id, once; nothing else arrives.
      expect(lost).toBe(0);
      expect(delivered.size).toBe(queued.length);
      expect(sim.stats.duplicates).toBe(0);
      expect(last!.disk.repaired!.salvaged).toBe(queued.length);
      expect(sim.stats.passwordGrants - grantsBefore).toBe(1);
      expect(assessHealth(last!).reasons.join('; ')).toMatch(/database was damaged/);
      expect(second.log()).toMatch(/database file is damaged \(corrupt\): moved it aside and salvaged/);
      if (damage === tokenPages) expect(second.log()).toMatch(/database damaged at run time/);
      second.child.kill('SIGTERM');
      expect((await second.exited).code).toBe(0);
    });
  }
});
