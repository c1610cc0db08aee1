import { describe, expect, it } from 'vitest';
import type { VehicleEvent } from '../../../src/fix/fix.js';
import { formatUuid, vehicleEventIdBytes } from '../../../src/store/event-id.js';
import { tempDir } from '../../helpers/tmp.js';
import { IDENTITY, T0, fixAt, openOutbox, rowCount } from './helpers.js';

const stop: VehicleEvent = { eventType: 'stopMovingEvent', time: T0 + 5_000, lat: 52.1, lon: 5.2, odometerM: 123_456 };

describe('outbox: vehicle events', () => {
  it('commits an event at once with the state that made it, in one transaction, and reads it back after a restart', async () => {
    const dir = tempDir();
    let o = await openOutbox(dir);
    o.outbox.record(fixAt(1));
    o.outbox.recordEvent(stop, { key: 'motion.test', value: 'stopped' });
    // Not waiting for the commit interval: the fix before it and the event are on disk now.
    expect(rowCount(o.db)).toBe(2);
    expect(o.meta.getJson('motion.test')).toBe('stopped');
    o.db.close(); // a power cut: no stop(), no final commit
    o = await openOutbox(dir);
    const [fix, event] = o.outbox.after(Number.MIN_SAFE_INTEGER, 10);
    expect(fix!.eventType).toBeUndefined();
    expect(event).toMatchObject({
      eventType: 'stopMovingEvent',
      time: stop.time,
      lat: 52.1,
      lon: 5.2,
      odometerM: 123_456,
      transition: true,
    });
    expect(event!.eventId).toBe(
      formatUuid(vehicleEventIdBytes(IDENTITY.externalSystemId, IDENTITY.externalDeviceId, 'stopMovingEvent', stop.time)),
    );
    await o.outbox.stop();
    o.db.close();
  });

  it('a failed commit leaves neither the event nor the state, and the next commit writes both', async () => {
    const o = await openOutbox(tempDir());
    o.db.exec(`CREATE TRIGGER refuse BEFORE INSERT ON outbox BEGIN SELECT RAISE(ABORT, 'refused'); END`);
    o.outbox.recordEvent(stop, { key: 'motion.test', value: 'stopped' });
    expect(rowCount(o.db)).toBe(0);
    expect(o.meta.get('motion.test')).toBeUndefined();
    o.db.exec('DROP TRIGGER refuse');
    o.outbox.flush();
    expect(rowCount(o.db)).toBe(1);
    expect(o.meta.getJson('motion.test')).toBe('stopped');
    await o.outbox.stop();
    o.db.close();
  });

  it('never shares an id with the location update of the same GNSS millisecond, nor with another kind', () => {
    const ids = ['startMovingEvent', 'stopMovingEvent', 'startEngineEvent', 'stopEngineEvent'].map((k) =>
      formatUuid(vehicleEventIdBytes('s', 'd', k, T0)),
    );
    expect(new Set(ids).size).toBe(4);
    expect(formatUuid(vehicleEventIdBytes('s', 'd', 'stopMovingEvent', T0))).toBe(ids[1]);
  });

  it('thinning at the bound keeps every vehicle event', async () => {
    const o = await openOutbox(tempDir(), { storage: { maxFixes: 100 } });
    for (let i = 1; i <= 300; i++) {
      o.outbox.record(fixAt(i, { transition: false }));
      if (i % 60 === 0) o.outbox.recordEvent({ ...stop, time: fixAt(i).time + 1 });
    }
    await o.outbox.stop();
    const kinds = o.db.prepare('SELECT count(*) AS n FROM outbox WHERE flags >= 128').get() as { n: number };
    expect(rowCount(o.db)).toBeLessThan(200);
    expect(kinds.n).toBe(5);
    o.db.close();
  });
});
