import { describe, expect, it, onTestFinished } from 'vitest';
import { silentLogger } from '../../../src/log.js';
import type { DeviceSection } from '../../../src/platform/device/body.js';
import { REGISTRATION_CONFIG_RETRY_S } from '../../../src/platform/device/registration-delay.js';
import { DeviceRegistrar } from '../../../src/platform/device/registrar.js';
import { StoreHandle } from '../../../src/store/store-handle.js';
import { openStores } from '../../../src/store/stores.js';
import { startPlatform, type Platform } from '../fixture.js';
import { waitFor } from '../../helpers/wait.js';

const DEVICE: DeviceSection = { externalSystemId: 'fleet-sys', carrierCode: 'C1', active: true };

function registrar(p: Platform, records: ReturnType<typeof openStores>['devices'], device: DeviceSection) {
  return new DeviceRegistrar({
    records,
    requester: p.agent().client,
    deviceUrl: p.urls.deviceUrl,
    device,
    probes: {
      system: async () => ({ serial: 'SN-0042', model: 'Computer' }),
      cpuSerial: async () => undefined,
      machineId: async () => undefined,
    },
    clock: p.clock,
    logger: silentLogger(),
    tuning: { retryMinS: 5, retryMaxS: 600, configRetryS: REGISTRATION_CONFIG_RETRY_S },
    random: () => 0.5,
    // A retry waits until stop(): one attempt is all this test makes.
    sleep: (_ms, signal) =>
      new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true })),
  });
}

/**
 * An update upserted while the card was read-only (the file keeps the registration of the earlier
 * configuration, same deviceUUID) goes into the file at the swap: the next start upserts nothing.
 */
describe('a registration updated on a read-only card, stored at the swap', () => {
  it('the updated registration replaces the stored one of the same deviceUUID: no upsert at the next start', async () => {
    const p = await startPlatform();
    const first = registrar(p, openStores(p.openDb()).devices, DEVICE);
    await first.start();
    await first.whenRegistered();
    await first.stop();

    // The configuration changed; the card is read-only: the update is upserted and kept in memory.
    const changed = { ...DEVICE, licensePlate: 'AB-123-C' };
    const handle = new StoreHandle(silentLogger());
    const copy = p.openDb();
    copy.pragma('query_only = ON');
    handle.attach(copy, openStores(copy));
    const second = registrar(p, handle.stores.devices, changed);
    await second.start();
    await waitFor('the update to be sent', () => !second.status().updatePending);
    expect(p.sim.stats).toMatchObject({ devicesCreated: 1, devicesUpdated: 1 });

    // The card takes writes: the store is swapped under the registrar.
    handle.pause();
    copy.close();
    const file = p.openDb();
    handle.attach(file, openStores(file));
    second.storeHeld();
    await second.stop();

    const third = registrar(p, openStores(p.openDb()).devices, changed);
    onTestFinished(() => third.stop());
    await third.start();
    // The stored registration is of this configuration: nothing to send in the background.
    expect(third.status().updatePending).toBe(false);
    await third.stop();
    expect(p.sim.stats.requests.devices).toBe(2);
  });
});
