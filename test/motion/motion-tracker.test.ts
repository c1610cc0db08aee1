import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { ENGINE_HOURS_SETTING_KEY, MOTION_META_KEY, ODOMETER_SETTING_KEY, type MotionRecord } from '../../src/motion/motion-record.js';
import { MotionTracker } from '../../src/motion/motion-tracker.js';
import type { QueueEntry } from '../../src/upload/upload-queue.js';
import { tempDir } from '../helpers/tmp.js';
import { openOutbox, type OpenOutbox } from '../store/outbox/helpers.js';
import { urbanDrive } from './drive.js';

const tracker = (ignitionWired = false): MotionTracker =>
  new MotionTracker({ movement: { stillSpeedKmh: 3 }, logger: silentLogger(), ignitionWired });

const vehicleEvents = (o: OpenOutbox): QueueEntry[] => o.outbox.after(Number.MIN_SAFE_INTEGER, 100_000).filter((e) => e.eventType);

describe('motion tracker: events into the outbox, state across restarts and power cuts', () => {
  it('the drive with a power cut in the middle of the depot stop: one stop, one start, no spurious start after it', async () => {
    const dir = tempDir();
    const drive = urbanDrive();
    const depot = drive.stands.find((s) => s.label === 'depot')!;
    const cutAt = drive.fixes.findIndex((f) => f.time >= depot.from + 90_000);
    let o = await openOutbox(dir);
    let t = tracker();
    t.attach(o.outbox, o.meta);
    for (const f of drive.fixes.slice(0, cutAt)) t.offer(f);
    expect(t.status().state).toBe('stopped');
    o.db.close(); // the power goes: no detach, no final commit
    o = await openOutbox(dir);
    t = tracker();
    t.attach(o.outbox, o.meta);
    expect(t.status()).toMatchObject({ state: 'stopped', since: new Date(vehicleEvents(o)[0]!.time).toISOString() });
    for (const f of drive.fixes.slice(cutAt)) t.offer(f);
    t.detach();
    await o.outbox.stop();
    const events = vehicleEvents(o);
    expect(events.map((e) => e.eventType)).toEqual(['stopMovingEvent', 'startMovingEvent']);
    expect(Math.abs(events[0]!.time - depot.from)).toBeLessThanOrEqual(5000);
    expect(Math.abs(events[1]!.time - depot.to)).toBeLessThanOrEqual(5000);
    // The odometer went on from the stop's committed value: within 2 % of the whole drive.
    expect(Math.abs(t.status().odometerM / drive.distanceM - 1)).toBeLessThanOrEqual(0.02);
    expect(events[0]!.odometerM).toBeGreaterThan(1000);
    o.db.close();
  });

  it('a restart while moving (state stored at stop) makes no event; the same drive again gives the same event ids', async () => {
    const drive = urbanDrive();
    const ids: string[][] = [];
    for (let round = 0; round < 2; round++) {
      const dir = tempDir();
      let o = await openOutbox(dir);
      let t = tracker();
      t.attach(o.outbox, o.meta);
      const half = 1200; // 120 s in, moving between the first lights
      for (const f of drive.fixes.slice(0, half)) t.offer(f);
      t.detach();
      await o.outbox.stop();
      o.db.close();
      o = await openOutbox(dir);
      t = tracker();
      t.attach(o.outbox, o.meta);
      for (const f of drive.fixes.slice(half)) t.offer(f);
      t.detach();
      await o.outbox.stop();
      ids.push(vehicleEvents(o).map((e) => e.eventId));
      expect(vehicleEvents(o).map((e) => e.eventType)).toEqual(['stopMovingEvent', 'startMovingEvent']);
      o.db.close();
    }
    expect(ids[1]).toEqual(ids[0]);
  });

  it('the installer setting is applied once, at the next start, and the odometer goes on from it', async () => {
    const dir = tempDir();
    let o = await openOutbox(dir);
    o.meta.setJson(ODOMETER_SETTING_KEY, { metres: 123_456_000, setAt: 1 });
    let t = tracker();
    t.attach(o.outbox, o.meta);
    expect(t.status().odometerM).toBe(123_456_000);
    for (const f of urbanDrive().fixes) t.offer(f);
    t.detach();
    const after = t.status().odometerM;
    expect(after).toBeGreaterThan(123_456_000 + 3600);
    expect(o.meta.getJson<MotionRecord>(MOTION_META_KEY)!.appliedSettingAt).toBe(1);
    await o.outbox.stop();
    o.db.close();
    o = await openOutbox(dir);
    t = tracker();
    t.attach(o.outbox, o.meta);
    expect(t.status().odometerM).toBe(after);
    o.db.close();
  });

  it('ignition: the first reading is a state, a change is an event at the last position; status says "not wired" without an input', async () => {
    const o = await openOutbox(tempDir());
    const t = tracker(true);
    t.attach(o.outbox, o.meta);
    const fixes = urbanDrive().fixes;
    t.offer(fixes[0]!);
    t.ignition(true, fixes[0]!.time);
    t.ignition(false, fixes[0]!.time + 500);
    t.ignition(false, fixes[0]!.time + 700);
    expect(vehicleEvents(o).map((e) => [e.eventType, e.time])).toEqual([['stopEngineEvent', fixes[0]!.time + 500]]);
    expect(t.status().ignition).toBe('off');
    expect(tracker(false).status().ignition).toBe('not wired');
    await o.outbox.stop();
    o.db.close();
  });
  it('engine hours: ignition-on GNSS time only, taken from the installer setting once, carried on events and kept across a power cut', async () => {
    const dir = tempDir();
    let o = await openOutbox(dir);
    o.meta.setJson(ENGINE_HOURS_SETTING_KEY, { seconds: 3_600_000, setAt: 7 });
    let t = tracker(true);
    t.attach(o.outbox, o.meta);
    expect(t.status().engineHours).toBe(1000);
    const fixes = urbanDrive().fixes; // 480 s at 10 Hz
    t.ignition(true, undefined); // read before the first fix: the state, no event
    for (const f of fixes.slice(0, 2400)) t.offer(f); // 240 s on
    t.ignition(false, fixes[2399]!.time);
    for (const f of fixes.slice(2400, 3600)) t.offer(f); // 120 s off: not counted
    t.ignition(true, fixes[3599]!.time);
    for (const f of fixes.slice(3600)) t.offer(f); // 120 s on
    const engineEvents = vehicleEvents(o).filter((e) => e.eventType!.includes('Engine'));
    expect(engineEvents.map((e) => [e.eventType, e.engineS])).toEqual([
      ['stopEngineEvent', 3_600_000 + 240],
      ['startEngineEvent', 3_600_000 + 240],
    ]);
    // The depot stop carries the hours of its own time (the engine ran from the first fix until 240 s).
    const stop = vehicleEvents(o).find((e) => e.eventType === 'stopMovingEvent')!;
    const onUntilStop = Math.min(240, (stop.time - fixes[0]!.time) / 1000);
    expect(Math.abs(stop.engineS! - (3_600_000 + onUntilStop))).toBeLessThanOrEqual(1);
    expect(t.status().engineHours).toBe(1000.1);
    o.outbox.flush({ final: true }); // a regular commit with the state, then the power goes
    o.db.close();
    o = await openOutbox(dir);
    t = tracker(true);
    t.attach(o.outbox, o.meta);
    const stored = o.meta.getJson<MotionRecord>(MOTION_META_KEY)!;
    expect(stored.engineS).toBeGreaterThanOrEqual(3_600_000 + 359);
    expect(stored.appliedEngineSettingAt).toBe(7);
    // Applied once: the same setting at the next start does not set the hours back.
    expect(t.status().engineHours).toBe(1000.1);
    await o.outbox.stop();
    o.db.close();
  });

  it('an impossible position step is left out of the odometer and counted in status', async () => {
    const o = await openOutbox(tempDir());
    const t = tracker();
    t.attach(o.outbox, o.meta);
    const fixes = urbanDrive().fixes;
    const far = (f: (typeof fixes)[number]) => ({ ...f, lat: f.lat! + 0.045 }); // 5 km north
    for (const f of fixes.slice(0, 1000)) t.offer(f);
    const before = t.status().odometerM;
    for (const f of fixes.slice(1000, 1003)) t.offer(far(f));
    for (const f of fixes.slice(1003, 1100)) t.offer(f);
    const driven = t.status().odometerM - before;
    expect(driven).toBeLessThan(200);
    expect(t.status().positionJumps).toBe(1);
    await o.outbox.stop();
    o.db.close();
  });

  it('a cut while moving: the restart bridges from the stored edge what was driven since the last commit and while off', async () => {
    const dir = tempDir();
    const drive = urbanDrive();
    let o = await openOutbox(dir);
    let t = tracker();
    t.attach(o.outbox, o.meta);
    for (const f of drive.fixes.slice(0, 300)) t.offer(f); // 25 s of the first leg
    o.outbox.flush({ final: true }); // the last regular commit with the state
    for (const f of drive.fixes.slice(300, 400)) t.offer(f); // 10 s more, never committed
    o.db.close(); // the power goes
    o = await openOutbox(dir);
    t = tracker();
    t.attach(o.outbox, o.meta);
    const stored = o.meta.getJson<MotionRecord>(MOTION_META_KEY)!;
    expect(stored.odometerEdge).toMatchObject({ time: drive.fixes[299]!.time });
    for (const f of drive.fixes.slice(600)) t.offer(f); // back 20 s later, still on the leg
    // About 500 m were driven between the commit and the first fix after the restart: counted as the straight line.
    expect(Math.abs(t.status().odometerM / drive.distanceM - 1)).toBeLessThanOrEqual(0.01);
    t.detach();
    await o.outbox.stop();
    o.db.close();
  });

  it('the state is committed with every change of fact at once, and for the counts alone at most every 15 s unless the outbox commits anyway', () => {
    const t = tracker();
    const fixes = urbanDrive().fixes;
    for (const f of fixes.slice(0, 200)) t.offer(f); // moving
    const first = t.due(true)!;
    expect(first).toBeDefined();
    t.committed(first);
    for (const f of fixes.slice(200, 300)) t.offer(f); // 10 s on, about 170 m more
    expect(t.due(true)).toBeUndefined();
    const riding = t.due(false)!;
    expect((riding.value as MotionRecord).odometerM).toBeGreaterThan((first.value as MotionRecord).odometerM + 100);
    t.committed(riding);
    for (const f of fixes.slice(300, 440)) t.offer(f); // 14 s since the last commit
    expect(t.due(true)).toBeUndefined();
    for (const f of fixes.slice(440, 460)) t.offer(f); // 16 s
    expect(t.due(true)).toBeDefined();
    t.committed(t.due(true)!);
    // Braking to the first light: the stop candidate is a fact, written with the next commit even alone.
    const light = fixes.findIndex((f, i) => i > 460 && (f.speed ?? 0) < 0.1);
    for (const f of fixes.slice(460, light + 20)) t.offer(f);
    const candidate = t.due(true);
    expect((candidate?.value as MotionRecord | undefined)?.movement.candidate).toBeDefined();
  });

  it('an engine change is dated when first read, before the fixes that came in during the debounce, and the engine time follows it', async () => {
    const o = await openOutbox(tempDir());
    const t = tracker(true);
    t.attach(o.outbox, o.meta);
    const fixes = urbanDrive().fixes;
    t.ignition(true, undefined);
    for (const f of fixes.slice(0, 100)) t.offer(f); // 10 s on (9.9 counted)
    const offAt = fixes[79]!.time; // first read 2 s ago; confirmed now
    t.ignition(false, offAt);
    const [off] = vehicleEvents(o).filter((e) => e.eventType === 'stopEngineEvent');
    expect(off!.time).toBe(offAt);
    expect(off!.engineS).toBe(8); // fixes[0] to fixes[79]: 7.9 s, rounded
    for (const f of fixes.slice(100, 200)) t.offer(f);
    t.ignition(true, fixes[150]!.time);
    for (const f of fixes.slice(200, 300)) t.offer(f);
    // Off from 7.9 s to 15 s: on 7.9 s + (29.9 - 15) s.
    expect(t.status().engineHours).toBe(Math.round((7.9 + 14.9) / 360) / 10);
    expect(
      vehicleEvents(o)
        .filter((e) => e.eventType === 'startEngineEvent')
        .map((e) => e.time),
    ).toEqual([fixes[150]!.time]);
    await o.outbox.stop();
    o.db.close();
  });
});
