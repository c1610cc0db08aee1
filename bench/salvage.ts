/**
 * npm run bench:salvage [-- --rows 1200000]
 *
 * How long the daemon is busy salvaging a damaged database of a large backlog (1.2 million queued
 * fixes, about 66 MiB with 1 KiB pages: more than the read-only copy's 64 MiB limit, which the
 * default storage.maxQueuedFixes allows), and how the watchdog fares meanwhile against the unit's
 * WatchdogSec=30s (pings at half of it, 15 s). The baseline, in the same process: VACUUM INTO of
 * the same file before it was damaged, the fastest whole copy SQLite makes. Assumes this machine's
 * storage (page cache warm); an SD card's random reads are slower, so the ratio is the figure to carry.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { silentLogger } from '../src/log.js';
import { databasePath, replaceDamagedDatabase } from '../src/store/database.js';
import type { SdNotify } from '../src/system/sd-notify.js';
import { WatchdogPings } from '../src/system/watchdog-pings.js';
import { numberArg } from './args.js';
import { buildDamagedDatabase } from './salvage-rig.js';

const rows = numberArg('rows', 1_200_000);
const dir = mkdtempSync(path.join(os.tmpdir(), 'ta-bench-salvage-'));
try {
  const intact = mkdtempSync(path.join(os.tmpdir(), 'ta-bench-salvage-base-'));
  const size = buildDamagedDatabase(intact, rows, []);
  const t0 = performance.now();
  const src = new BetterSqlite3(databasePath(intact), { readonly: true });
  src.exec(`VACUUM INTO '${path.join(intact, 'copy.db')}'`);
  src.close();
  const baselineMs = performance.now() - t0;
  rmSync(intact, { recursive: true, force: true });

  buildDamagedDatabase(dir, rows);
  const pings: number[] = [];
  const notify = {
    watchdogIntervalMs: () => 15_000,
    send: (m: string[]) => void (m.includes('WATCHDOG=1') && pings.push(performance.now())),
  } as unknown as SdNotify;
  const watchdog = new WatchdogPings({ notify, logger: silentLogger(), dataDir: dir, commitState: () => undefined, readOnly: () => false });
  let progress = 0;
  let lastProgress = performance.now();
  let longestStep = 0;
  const rssBefore = process.memoryUsage().rss;
  let rssPeak = rssBefore;
  const started = performance.now();
  const fresh = replaceDamagedDatabase(
    {
      dataDir: dir,
      logger: silentLogger(),
      onProgress: () => {
        const now = performance.now();
        longestStep = Math.max(longestStep, now - lastProgress);
        lastProgress = now;
        progress++;
        rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
        watchdog.duringWork('salvaging');
      },
    },
    'SQLITE_CORRUPT: bench',
  );
  const salvageMs = performance.now() - started;
  const salvaged = (fresh.prepare('SELECT count(*) AS n FROM outbox').get() as { n: number }).n;
  fresh.close();
  const mib = (b: number) => (b / 1048576).toFixed(1);
  console.log(`database: ${rows} queued fixes, ${mib(size)} MiB, 3 damaged pages`);
  console.log(`baseline VACUUM INTO of the intact file: ${(baselineMs / 1000).toFixed(1)} s`);
  console.log(
    `salvage: ${(salvageMs / 1000).toFixed(1)} s (${(salvageMs / baselineMs).toFixed(1)} x baseline), ${salvaged} fixes salvaged, RSS +${mib(rssPeak - rssBefore)} MiB`,
  );
  console.log(
    `watchdog: ${progress} progress calls, longest step ${(longestStep / 1000).toFixed(2)} s, ${pings.length} pings at a 15 s interval; without them the event loop is held ${(salvageMs / 1000).toFixed(1)} s of WatchdogSec=30s`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
