/**
 * The vehicle's facts in `status`, from the real parts: a MotionTracker attached to a real outbox
 * over a SQLite file, the daemon's provider and views, the screen and the health rules; then, the
 * "daemon" stopped, the same facts read back from the file.
 */
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Fix } from '../../src/fix/fix.js';
import { silentLogger } from '../../src/log.js';
import { MotionTracker } from '../../src/motion/motion-tracker.js';
import { DaemonStatusProvider } from '../../src/status/daemon-provider.js';
import { databaseSnapshot } from '../../src/status/database-snapshot.js';
import { assessHealth } from '../../src/status/health.js';
import { outboxSummary } from '../../src/status/upload-views.js';
import { renderStatus } from '../../src/terminal/status-screen.js';
import { ManualClock } from '../../src/system/clock.js';
import { tempDir } from '../helpers/tmp.js';
import { openOutbox } from '../store/outbox/helpers.js';

const T0 = Date.UTC(2026, 10, 22, 8, 0, 0);

/** A still receiver at the depot (Doppler 0), or `over` where it says. */
function fix(time: number, over: Partial<Fix> = {}): Fix {
  return { time, mode: 3, lat: 52.0907, lon: 5.1214, speed: 0, track: 0, hdop: 0.8, satellitesUsed: 9, ...over };
}

async function runningParts() {
  const dataDir = path.join(tempDir(), 'data');
  const o = await openOutbox(dataDir);
  let open = true;
  onTestFinished(async () => {
    if (!open) return;
    await o.outbox.stop();
    o.db.close();
  });
  const tracker = new MotionTracker({ movement: { stillSpeedKmh: 3 }, logger: silentLogger(), ignitionWired: true });
  tracker.attach(o.outbox, o.meta);
  const clock = new ManualClock();
  const provider = new DaemonStatusProvider({
    clock,
    dataDir,
    startedMonoMs: 0,
    outbox: () => outboxSummary(o.outbox.status(), undefined, { ms: T0, basis: 'gnss' }),
    motion: () => tracker.status(),
  });
  const stop = async (): Promise<void> => {
    tracker.detach();
    await o.outbox.stop();
    o.db.close();
    open = false;
  };
  return { dataDir, o, tracker, provider, clock, stop };
}

describe('status: engine hours, position jumps and the vehicle events the outbox refused', () => {
  it('running: engine hours beside the odometer, the jumps left out, a refused event a warning that makes it DEGRADED', async () => {
    const { o, tracker, provider, clock } = await runningParts();
    tracker.ignition(true, T0);
    tracker.offer(fix(T0));
    tracker.offer(fix(T0 + 1000));

    // Nothing to say yet: no jump line, no refused events, no reason of the vehicle's.
    const quiet = provider.snapshot();
    expect(quiet.outbox.eventsRefused).toBe(0);
    expect(quiet.motion).toMatchObject({ engineHours: 0, positionJumps: 0 });
    const quietText = renderStatus(quiet, { color: false, nowMs: clock.wallMs() });
    expect(quietText).toMatch(/^vehicle\s+\S.* {2}odometer 0\.0 km {2}engine 0\.0 h {2}ignition on$/m);
    expect(quietText).not.toMatch(/position jumps|trip\/engine event/);
    expect(assessHealth(quiet).reasons.join('\n')).not.toMatch(/trip\/engine/);

    // A fix 5 km off one second later: no vehicle goes there, so it is left out.
    tracker.offer(fix(T0 + 2000, { lat: 52.1357 }));
    // An hour later, still at the depot with the engine on.
    tracker.offer(fix(T0 + 3_600_000));
    // An event the outbox cannot store (no usable time): lost, so counted.
    o.outbox.recordEvent({ eventType: 'stopEngineEvent', time: Number.NaN, lat: 52.0907, lon: 5.1214, odometerM: 0 });

    const s = provider.snapshot();
    expect(s.outbox.eventsRefused).toBe(1);
    expect(s.motion).toMatchObject({ engineHours: 1, positionJumps: 1, odometerM: 0 });
    const health = assessHealth(s);
    expect(health.level).not.toBe('healthy');
    expect(health.reasons).toContain('1 trip/engine event could not be stored and is lost: see the log');
    const text = renderStatus(s, { color: false, nowMs: clock.wallMs() }, health);
    expect(text).toMatch(/^vehicle\s+\S.* {2}odometer 0\.0 km {2}engine 1\.0 h {2}ignition on$/m);
    expect(text).toMatch(/^ {10}position jumps left out: 1 since start \(not counted in the odometer nor the trips\)$/m);
    expect(text).toMatch(/^! 1 trip\/engine event could not be stored and is lost: see the log$/m);
    // The JSON of `status --json` carries the same facts.
    const json = JSON.parse(JSON.stringify({ ...s, health })) as typeof s & { health: typeof health };
    expect(json.outbox.eventsRefused).toBe(1);
    expect(json.motion).toMatchObject({ engineHours: 1, positionJumps: 1 });
  });

  it('stopped: the database gives the stored engine hours and the count of refused events; health says they are lost', async () => {
    const parts = await runningParts();
    const { o, tracker } = parts;
    tracker.ignition(true, T0);
    tracker.offer(fix(T0));
    tracker.offer(fix(T0 + 5_400_000));
    for (let i = 0; i < 3; i++)
      o.outbox.recordEvent({ eventType: 'startMovingEvent', time: T0 + 0.5 + i, lat: 52.0907, lon: 5.1214, odometerM: 0 });
    await parts.stop();

    const s = databaseSnapshot({ dataDir: parts.dataDir, wallMs: T0 + 5_500_000, motion: { ignitionWired: true } });
    expect(s.outbox.eventsRefused).toBe(3);
    expect(s.motion).toMatchObject({ engineHours: 1.5, ignition: 'on', lastKnown: true });
    expect(s.motion).not.toHaveProperty('positionJumps');
    const health = assessHealth(s);
    expect(health.reasons).toContain('3 trip/engine events could not be stored and are lost: see the log');
    const text = renderStatus(s, { color: false, nowMs: T0 + 5_500_000 }, health);
    expect(text).toMatch(/^vehicle\s+last known: .* {2}odometer 0\.0 km {2}engine 1\.5 h {2}ignition on \(stored\)$/m);

    // Without an ignition input in the configuration the daemon shows no engine hours: neither does the database.
    const unwired = databaseSnapshot({ dataDir: parts.dataDir, wallMs: T0 + 5_500_000, motion: { ignitionWired: false } });
    expect(unwired.motion).not.toHaveProperty('engineHours');
  });
});
