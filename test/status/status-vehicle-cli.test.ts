/**
 * `telematics-agent status` with the daemon stopped, as the technician runs it (the built CLI on a
 * real database): the engine hours the daemon stored or an installer's `engine-hours set` not applied
 * yet, and the vehicle events the outbox could not store.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { MOTION_META_KEY, type MotionRecord } from '../../src/motion/motion-record.js';
import type { StatusSnapshot } from '../../src/status/snapshot.js';
import type { Health } from '../../src/status/health.js';
import { openDatabase } from '../../src/store/database.js';
import { MetaStore } from '../../src/store/meta.js';
import { COUNTER } from '../../src/store/outbox/counters.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/tmp.js';
import { seedDatabase, writeConfig } from './fixtures.js';

/** A fixed instant: nothing below depends on today's date. */
const SEEDED = Date.UTC(2026, 10, 22, 12);

async function status(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runCli(['status', ...args], { timeoutMs: 20_000 });
}

function withDatabase(dataDir: string, write: (meta: MetaStore) => void): void {
  const db = openDatabase({ dataDir, logger: silentLogger() });
  try {
    write(new MetaStore(db));
  } finally {
    db.close();
  }
}

describe('status with the daemon stopped: engine hours and refused vehicle events', () => {
  it('shows the stored engine hours beside the odometer, then a pending engine-hours set with its note', async () => {
    const dir = tempDir();
    const dataDir = path.join(dir, 'data');
    const config = writeConfig(dir, { ignition: { file: path.join(dir, 'ignition'), onAbove: 0 } });
    seedDatabase(dataDir, SEEDED);
    // As the tracker stores it with an ignition input (motion-tracker.ts #record): two hours on.
    const record: MotionRecord = {
      movement: { state: 'stopped', since: Date.UTC(2026, 10, 22, 8, 12, 3), at: { lat: 52.09, lon: 5.12 } },
      odometerM: 123_456_789.4,
      ignition: 'off',
      engineS: 7200,
    };
    withDatabase(dataDir, (meta) => meta.setJson(MOTION_META_KEY, record));

    const r = await status(['--config', config]);
    expect(r.stdout).toMatch(
      /^vehicle\s+last known: stopped since 08:12:03Z {2}odometer 123,456\.8 km {2}engine 2\.0 h {2}ignition off \(stored\)$/m,
    );
    const j = JSON.parse((await status(['--json', '--config', config])).stdout) as StatusSnapshot;
    expect(j.motion?.engineHours).toBe(2);

    const set = await runCli(['engine-hours', 'set', '1234.5', '--config', config]);
    expect(set.code, set.stderr).toBe(0);
    const after = await status(['--config', config]);
    expect(after.stdout).toMatch(/odometer 123,456\.8 km {2}engine 1,234\.5 h {2}ignition off \(stored\)$/m);
    expect(after.stdout).toMatch(/^engine hours set to 1234\.5 h by the installer: the daemon starts from it at its next start$/m);
    const afterJson = JSON.parse((await status(['--json', '--config', config])).stdout) as StatusSnapshot;
    expect(afterJson.motion?.engineHours).toBe(1234.5);

    // Without an ignition input the daemon neither counts nor sends them: no figure, and the note says why.
    const unwired = await status(['--config', writeConfig(dir)]);
    expect(unwired.stdout).toMatch(/^vehicle\s+last known: .*odometer 123,456\.8 km {2}ignition not wired \(stored\)$/m);
    expect(unwired.stdout).toMatch(
      /^engine hours set to 1234\.5 h by the installer: the daemon takes it at its next start, but counts and sends engine hours only with an ignition input \(ignition\.file or ignition\.gpio\)$/m,
    );
  });

  it('vehicle events the outbox refused: a warning with their count and what it means; none, no line', async () => {
    const dir = tempDir();
    const dataDir = path.join(dir, 'data');
    const config = writeConfig(dir);
    seedDatabase(dataDir, SEEDED);

    const none = await status(['--config', config]);
    expect(none.stdout).not.toMatch(/trip\/engine/);
    expect((JSON.parse((await status(['--json', '--config', config])).stdout) as StatusSnapshot).outbox.eventsRefused).toBe(0);

    // The outbox's counter as it writes it (counters.ts, with its commits and at stop).
    withDatabase(dataDir, (meta) => meta.increment(COUNTER.eventsRefused, 3));
    const r = await status(['--config', config]);
    expect(r.code).toBe(2); // the daemon is not running: FAILING, the loss listed with it
    expect(r.stdout).toMatch(/^! 3 trip\/engine events could not be stored and are lost: see the log$/m);
    expect(r.stdout).not.toMatch(/SECRET/);
    const j = await status(['--json', '--config', config]);
    const s = JSON.parse(j.stdout) as StatusSnapshot & { health: Health };
    expect(s.outbox.eventsRefused).toBe(3);
    expect(s.health.reasons).toContain('3 trip/engine events could not be stored and are lost: see the log');
    expect(j.stdout).not.toMatch(/SECRET/);
  });
});
