import { afterEach, describe, expect, it } from 'vitest';
import { fixAt } from '../store/outbox/helpers.js';
import { closeRig, DEVICE, eventTimes, until, uploadRig, type UploadRig } from './harness.js';

let rig: UploadRig | undefined;
afterEach(async () => {
  await closeRig(rig);
  rig = undefined;
});

describe('uploader against the platform simulator', () => {
  it('sends nothing before registration, then every queued fix exactly once with its outbox id', async () => {
    rig = await uploadRig({}, { licensePlate: 'AA-11-BB' });
    for (let i = 0; i < 300; i++) rig.outbox.record(fixAt(i));
    rig.outbox.flush();
    const ids = rig.outbox.after(0, 1000).map((e) => e.eventId);
    // No sleep to show that nothing is sent: the uploader dispatches synchronously when it may
    // send, so after the queued I/O callbacks have run, nothing in flight means nothing was sent.
    await new Promise((r) => setImmediate(r));
    expect(rig.uploader.status()).toMatchObject({ state: 'waiting-registration', inFlight: 0 });
    expect(rig.platform.sim.stats.requests.events).toBe(0);
    rig.registration.register();
    await until(rig, () => rig!.platform.sim.events.size === 300 && rig!.outbox.pendingCount() === 0);
    expect([...rig.platform.sim.events.keys()].sort()).toEqual([...ids].sort());
    expect(rig.platform.sim.stats.duplicates).toBe(0);
    expect(rig.platform.sim.stats.invalidEvents).toBe(0);
    const e = rig.platform.sim.events.get(ids[0]!)!.event;
    expect(e).toMatchObject({
      eventType: 'locationUpdateEvent',
      lifecycle: 'actual',
      vehicle: { associationType: 'inline', entity: { licensePlate: 'AA-11-BB' } },
    });
    rig.outbox.flush({ final: true }); // delivered rows are deleted in batches; at stop, all of them
    expect((rig.db.prepare('SELECT count(*) AS n FROM outbox').get() as { n: number }).n).toBe(0);
    expect(rig.outbox.status()).toMatchObject({ pending: 0, sentTotal: 300 });
    expect(rig.uploader.status()).toMatchObject({ state: 'idle', consecutiveFailures: 0 });
  });

  it('live-first: the newest fix goes out first, the backlog follows oldest-first', async () => {
    rig = await uploadRig({ concurrency: 1 });
    for (let i = 0; i < 200; i++) rig.outbox.record(fixAt(i));
    rig.outbox.flush();
    rig.registration.register();
    await until(rig, () => rig!.outbox.pendingCount() === 0);
    const times = eventTimes(rig);
    expect(times[0]).toBe(fixAt(199).time);
    expect(times.slice(1)).toEqual([...Array(199).keys()].map((i) => fixAt(i).time));
    expect(rig.uploader.status()).toMatchObject({ live: { sent: 1 }, backlog: { sent: 199 } });
  });

  it('live-first: a fix recorded while the backlog drains jumps the queue', async () => {
    rig = await uploadRig({ concurrency: 1 });
    for (let i = 0; i < 400; i++) rig.outbox.record(fixAt(i));
    rig.outbox.flush();
    rig.registration.register();
    await until(rig, () => rig!.platform.sim.events.size >= 50);
    rig.outbox.record(fixAt(1000));
    await until(rig, () => rig!.platform.sim.events.size === 401);
    const times = eventTimes(rig);
    const at = times.indexOf(fixAt(1000).time);
    expect(at).toBeGreaterThan(0);
    expect(at).toBeLessThan(100); // sent long before the 400-fix backlog finished
    const backlog = times.filter((t) => t !== fixAt(1000).time && t !== fixAt(399).time);
    expect(backlog).toEqual([...backlog].sort((a, b) => a - b));
  });

  it('oldest-first: strictly in recording order', async () => {
    rig = await uploadRig({ concurrency: 1, order: 'oldest-first' });
    for (let i = 0; i < 150; i++) rig.outbox.record(fixAt(i));
    rig.registration.register();
    await until(rig, () => rig!.platform.sim.events.size === 150);
    expect(eventTimes(rig)).toEqual([...Array(150).keys()].map((i) => fixAt(i).time));
    expect(rig.uploader.status().live.sent).toBe(0);
  });

  it('sends fixes recorded before registration with the registered identity', async () => {
    rig = await uploadRig();
    rig.outbox.record(fixAt(1));
    rig.registration.register({
      externalSystemId: 'acme-tms',
      externalDeviceId: 'pi-0001',
      source: 'config',
      deviceUUID: '11111111-2222-4333-8444-555555555555',
    });
    await until(rig, () => rig!.platform.sim.events.size === 1);
    const [e] = [...rig.platform.sim.events.values()];
    // No licence plate: the device identity places the position (eventDetail "position", the default).
    expect(e!.event.externalAttributes).toEqual({ externalSystemId: 'acme-tms', externalDeviceId: 'pi-0001' });
    // And the platform was asked not to echo it.
    expect(e!.preferMinimal).toBe(true);
  });

  it('upload.eventDetail: "position" places the vehicle by its plate alone; "full" adds the receiver facts and both identities', async () => {
    rig = await uploadRig({}, { licensePlate: 'AB-123-C' });
    rig.outbox.record(fixAt(1));
    rig.registration.register();
    await until(rig, () => rig!.platform.sim.events.size === 1);
    const [position] = [...rig.platform.sim.events.values()];
    expect(position!.event.vehicle).toEqual({ associationType: 'inline', entity: { licensePlate: 'AB-123-C' } });
    expect(position!.event.externalAttributes).toBeUndefined();
    await closeRig(rig);

    rig = await uploadRig({ eventDetail: 'full' }, { licensePlate: 'AB-123-C' });
    rig.outbox.record(fixAt(1));
    rig.registration.register();
    await until(rig, () => rig!.platform.sim.events.size === 1);
    const [full] = [...rig.platform.sim.events.values()];
    expect(full!.event.vehicle).toEqual(position!.event.vehicle);
    expect(full!.event.externalAttributes).toMatchObject({
      externalSystemId: DEVICE.externalSystemId,
      externalDeviceId: DEVICE.externalDeviceId,
      deviceUUID: DEVICE.deviceUUID,
    });
    expect(full!.event.geoReference).toEqual(position!.event.geoReference);
  });
});
