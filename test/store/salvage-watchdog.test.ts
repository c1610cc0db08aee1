import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { replaceDamagedDatabase } from '../../src/store/database.js';
import type { SdNotify } from '../../src/system/sd-notify.js';
import { WatchdogPings } from '../../src/system/watchdog-pings.js';
import { buildDamagedDatabase } from '../../bench/salvage-rig.js';
import { tempDir } from '../helpers/tmp.js';

/**
 * A salvage holds the event loop for as long as it reads and writes (about 20 s for 1.1 million
 * queued fixes here, bench:salvage), longer than the unit's WatchdogSec=30s allows on slower
 * storage: systemd would kill the daemon in the middle of it. The salvage feeds the watchdog
 * between chunks, so pings keep their interval however long it takes.
 */
describe('the watchdog during a salvage', () => {
  it('is fed between the chunks of a salvage that outlasts its interval', { timeout: 300_000 }, () => {
    const dir = tempDir('ta-salvage-wd-');
    buildDamagedDatabase(dir, 200_000);
    const pings: number[] = [];
    const notify = {
      watchdogIntervalMs: () => 100,
      send: (m: string[]) => {
        if (m.includes('WATCHDOG=1')) pings.push(performance.now());
      },
    } as unknown as SdNotify;
    const watchdog = new WatchdogPings({
      notify,
      logger: silentLogger(),
      dataDir: dir,
      commitState: () => undefined,
      readOnly: () => false,
    });
    const started = performance.now();
    const fresh = replaceDamagedDatabase(
      { dataDir: dir, logger: silentLogger(), onProgress: () => watchdog.duringWork('salvaging') },
      'SQLITE_CORRUPT: test',
    );
    const ended = performance.now();
    const rows = (fresh.prepare('SELECT count(*) AS n FROM outbox').get() as { n: number }).n;
    fresh.close();
    expect(rows).toBeGreaterThan(199_000);
    // The salvage takes longer than the interval (else this test shows nothing), and pings come
    // through it: never a gap of half WatchdogSec=30s (when systemd's advice says to ping).
    const took = ended - started;
    expect(took).toBeGreaterThan(300);
    expect(pings.length).toBeGreaterThan(1);
    const marks = [started, ...pings, ended];
    const longestGap = Math.max(...marks.slice(1).map((t, i) => t - marks[i]!));
    expect(longestGap).toBeLessThan(15_000);
    process.stderr.write(
      `salvage of 200,000 fixes: ${took.toFixed(0)} ms, ${pings.length} pings, longest gap ${longestGap.toFixed(0)} ms\n`,
    );
  });
});
