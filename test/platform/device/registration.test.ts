import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log.js';
import type { DeviceSection } from '../../../src/platform/device/body.js';
import { DeviceRegistrar } from '../../../src/platform/device/registrar.js';
import { DeviceStore } from '../../../src/store/device-store.js';
import { openStores } from '../../../src/store/stores.js';
import { REGISTRATION_CONFIG_RETRY_S, registrationDelayMs } from '../../../src/platform/device/registration-delay.js';
import { PlatformError, type ErrorCode } from '../../../src/errors.js';
import { probeHardwareId, type IdentityProbes } from '../../../src/system/identity.js';
import { startPlatform, type Platform } from '../fixture.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { waitFor } from '../../helpers/wait.js';

const TUNING = { retryMinS: 5, retryMaxS: 600, configRetryS: REGISTRATION_CONFIG_RETRY_S };
const DEVICE: DeviceSection = { externalSystemId: 'fleet-sys', carrierCode: 'C1', active: true };

function probes(o: { serial?: string; model?: string; cpu?: string; machine?: string } = {}): IdentityProbes & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    system: async () => {
      calls.push('system');
      return { serial: o.serial ?? '-', model: o.model ?? 'Computer' };
    },
    cpuSerial: async () => {
      calls.push('cpu');
      return o.cpu;
    },
    machineId: async () => {
      calls.push('machine');
      return o.machine;
    },
  };
}

/** Records each wait; resolves at once (`pass`) or holds until stop() aborts it. */
function recordingSleep(pass: boolean) {
  const delays: number[] = [];
  const sleep = (ms: number, signal: AbortSignal): Promise<void> => {
    delays.push(ms);
    if (pass) return Promise.resolve();
    return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
  };
  return { delays, sleep };
}

function registrar(
  p: Platform,
  o: {
    device?: DeviceSection;
    probes?: IdentityProbes;
    sleep?: ReturnType<typeof recordingSleep>;
    logger?: ReturnType<typeof captureLogger>;
    password?: string;
  } = {},
) {
  const { client, db } = p.agent(o.password ? { password: o.password } : {});
  const sleep = o.sleep ?? recordingSleep(true);
  const r = new DeviceRegistrar({
    records: openStores(db).devices,
    requester: client,
    deviceUrl: p.urls.deviceUrl,
    device: o.device ?? DEVICE,
    probes: o.probes ?? probes({ serial: 'SN-0042' }),
    clock: p.clock,
    logger: o.logger?.logger ?? silentLogger(),
    tuning: TUNING,
    random: () => 0.5,
    sleep: sleep.sleep,
  });
  return { r, db, sleep };
}

/** Runs a registrar to its first registration (or its first wait) and stops it. */
async function boot(p: Platform, o: Parameters<typeof registrar>[1] = {}) {
  const x = registrar(p, o);
  await x.r.start();
  return x;
}

describe('device self-registration', () => {
  it('first boot: probes the hardware id, stores it, upserts once and stores the deviceUUID', async () => {
    const p = await startPlatform();
    const { r, db } = await boot(p);
    const device = await r.whenRegistered();
    expect(device).toMatchObject({ externalSystemId: 'fleet-sys', externalDeviceId: 'SN-0042', source: 'system-serial' });
    expect(device.deviceUUID).toBe(p.sim.devices[0]?.deviceUUID);
    expect(p.sim.devices[0]).toMatchObject({ customerDeviceId: 'SN-0042', carrierCode: 'C1', active: true });
    expect(new DeviceStore(db).registration()?.deviceUUID).toBe(device.deviceUUID);
    expect(new DeviceStore(db).identity()).toMatchObject({ externalDeviceId: 'SN-0042', source: 'system-serial' });
    expect(r.status()).toMatchObject({ state: 'registered', attempts: 1, updatePending: false });
    await r.stop();
  });

  it('second boot: registered at once from the database, no upsert', async () => {
    const p = await startPlatform();
    const first = await boot(p);
    const uuid = (await first.r.whenRegistered()).deviceUUID;
    await first.r.stop();
    const second = await boot(p, { probes: probes({ serial: 'SOMETHING-ELSE' }) });
    expect(second.r.current()?.deviceUUID).toBe(uuid);
    expect(second.r.current()?.externalDeviceId).toBe('SN-0042'); // the stored identity, not a new probe
    await second.r.stop();
    expect(p.sim.stats.requests.devices).toBe(1);
    expect(second.r.status().attempts).toBe(0);
  });

  it('config change: one upsert with the same deviceUUID, then none again', async () => {
    const p = await startPlatform();
    const first = await boot(p);
    const uuid = (await first.r.whenRegistered()).deviceUUID;
    await first.r.stop();
    const changed = { ...DEVICE, licensePlate: 'AB-123-C', driverName: 'Jan' };
    const second = registrar(p, { device: changed });
    await second.r.start();
    expect(second.r.current()?.deviceUUID).toBe(uuid); // the uploader is not held up by the update
    await waitFor('the update to be sent', () => !second.r.status().updatePending);
    await second.r.stop();
    expect(p.sim.stats).toMatchObject({ devicesCreated: 1, devicesUpdated: 1 });
    expect(p.sim.devices[0]).toMatchObject({ deviceUUID: uuid, licensePlate: 'AB-123-C', driverName: 'Jan' });
    const third = await boot(p, { device: changed });
    await third.r.stop();
    expect(p.sim.stats.requests.devices).toBe(2);
  });

  it.each([
    ['400 (a field the platform refuses)', { ...DEVICE, carrierCode: 42 as unknown as string }, 400, /carrierCode: must be a string/],
    ['403 (a carrier the account may not use)', { ...DEVICE, carrierCode: 'NOT-MINE' }, 403, /not permitted.*NOT-MINE/],
  ])(
    '%s is a configuration problem: the platform message in logs and status, one attempt, a long wait',
    async (_name, device, status, message) => {
      const p = await startPlatform({ users: [{ username: 'agent', password: 'pw', carriers: ['C1'] }] });
      const log = captureLogger();
      const sleep = recordingSleep(false);
      const { r } = await boot(p, { device, sleep, logger: log });
      await waitFor('the first wait', () => sleep.delays.length === 1);
      expect(sleep.delays).toEqual([2700_000]); // REGISTRATION_CONFIG_RETRY_S 3600 with equal jitter, random 0.5
      const s = r.status();
      expect(s.state).toBe('config-error');
      expect(s.lastError).toMatchObject({ class: 'config', status });
      expect(s.lastError?.message).toMatch(message);
      expect(s.nextAttemptAt).toBe(p.clock.wallMs() + 2700_000);
      expect(log.text()).toMatch(message);
      expect(r.current()).toBeUndefined();
      expect(p.sim.stats.requests.devices).toBe(1);
      const ac = new AbortController();
      const waiting = r.whenRegistered(ac.signal);
      ac.abort(new Error('gave up'));
      await expect(waiting).rejects.toThrow('gave up');
      await r.stop();
    },
  );

  it('5xx and dropped connections: backs off with jitter, growing, then registers', async () => {
    const p = await startPlatform();
    p.sim.faults.set('devices', { status500Rate: 1, limit: 2 });
    const sleep = recordingSleep(true);
    const { r } = await boot(p, { sleep });
    await r.whenRegistered();
    await r.stop();
    expect(sleep.delays).toEqual([3750, 7500]); // equal jitter with random 0.5: 5 s * 0.75, 10 s * 0.75
    expect(p.sim.stats.requests.devices).toBe(3);
    expect(r.status()).toMatchObject({ state: 'registered', attempts: 3 });
  });

  it('401 from the device service goes through the token manager (one refresh, one retry)', async () => {
    const p = await startPlatform();
    const { client } = p.agent();
    expect((await client.send({ method: 'GET', url: p.urls.deviceUrl })).status).toBe(200); // a stored pair
    p.sim.expireAccessTokens();
    const { r } = await boot(p);
    await r.whenRegistered();
    await r.stop();
    expect(p.sim.stats).toMatchObject({ passwordGrants: 1, refreshes: 1, unauthorized: 1, devicesCreated: 1 });
  });

  it('rejected credentials: waits as long as the token manager says, without calling the device service', async () => {
    const p = await startPlatform();
    const sleep = recordingSleep(false);
    const { r } = await boot(p, { sleep, password: 'wrong' });
    await waitFor('the first wait', () => sleep.delays.length === 1);
    expect(r.status().lastError).toMatchObject({ code: 'CREDENTIALS_REJECTED', class: 'config' });
    expect(sleep.delays[0]).toBeGreaterThanOrEqual(30_000);
    expect(sleep.delays[0]).toBeLessThan(3600_000);
    expect(p.sim.stats.requests.devices).toBe(0);
    await r.stop();
  });

  it('accepts the deviceUUID field in any case', async () => {
    const p = await startPlatform({ uuidFieldName: 'DeviceUuid' });
    const { r } = await boot(p);
    const d = await r.whenRegistered();
    await r.stop();
    expect(d.deviceUUID).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('a configured externalDeviceId wins, and customerDeviceId defaults to it', async () => {
    const p = await startPlatform();
    const pr = probes({ serial: 'SN-1' });
    const { r } = await boot(p, { device: { ...DEVICE, externalDeviceId: 'truck-7' }, probes: pr });
    expect(await r.whenRegistered()).toMatchObject({ externalDeviceId: 'truck-7', source: 'config' });
    await r.stop();
    expect(pr.calls).toEqual([]);
    expect(p.sim.devices[0]).toMatchObject({ externalDeviceId: 'truck-7', customerDeviceId: 'truck-7' });
  });
});

describe('hardware identity: fallback order', () => {
  it.each([
    ['a DMI system serial', { serial: 'PF2ABCDE', cpu: '10000000abcdef01', machine: 'm' }, { value: 'PF2ABCDE', source: 'system-serial' }],
    [
      'a firmware placeholder, then the CPU serial',
      { serial: 'To Be Filled By O.E.M.', cpu: '10000000ABCDEF01', machine: 'm' },
      { value: '10000000abcdef01', source: 'cpu-serial' },
    ],
    [
      'a Raspberry Pi (si reports the CPU serial as system serial)',
      { serial: '00000000abcdef02', model: 'Raspberry Pi', machine: 'm' },
      { value: '00000000abcdef02', source: 'cpu-serial' },
    ],
    [
      'all-zero serials, then /etc/machine-id',
      { serial: '0000000000', cpu: '0000000000000000', machine: 'ABCDEF0123456789abcdef0123456789\n' },
      { value: 'abcdef0123456789abcdef0123456789', source: 'machine-id' },
    ],
  ])('%s', async (_name, o, expected) => {
    expect(await probeHardwareId(probes(o))).toEqual(expected);
  });

  it('no usable id at all is a configuration error naming device.externalDeviceId', async () => {
    await expect(probeHardwareId(probes({}))).rejects.toMatchObject({
      code: 'DEVICE_ID_UNAVAILABLE',
      errorClass: 'config',
      message: expect.stringMatching(/device\.externalDeviceId/),
    });
  });

  it('a probe that throws falls through to the next', async () => {
    const p = probes({ machine: 'feedface' });
    p.system = async () => {
      throw new Error('dmidecode not permitted');
    };
    expect(await probeHardwareId(p)).toEqual({ value: 'feedface', source: 'machine-id' });
  });
});

describe('registration retry delay', () => {
  const err = (
    status: number | undefined,
    cls: 'transient' | 'config' | 'auth',
    retryAfterMs?: number,
    code: ErrorCode = 'PLATFORM_HTTP_ERROR',
  ) =>
    new PlatformError(code, 'm', {
      class: cls,
      ...(status !== undefined ? { status } : {}),
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    });
  it.each([
    ['400: the long configuration wait, equal jitter', err(400, 'config'), 1, 2700_000],
    ['403: the long configuration wait, equal jitter', err(403, 'config'), 5, 2700_000],
    ['404 (wrong deviceUrl): the long configuration wait, equal jitter', err(404, 'config'), 1, 2700_000],
    ["credentials rejected: the token manager's wait", err(401, 'config', 240_000, 'CREDENTIALS_REJECTED'), 1, 240_000],
    ['503, first failure: 5 s with equal jitter', err(503, 'transient'), 1, 3750],
    ['503, fourth failure: 40 s with equal jitter', err(503, 'transient'), 4, 30_000],
    ['network error after many failures: capped at 600 s', err(undefined, 'transient'), 20, 450_000],
    ['429 with a longer Retry-After: the Retry-After, spread above it', err(429, 'transient', 90_000), 1, 112_500],
    ['401 after the retry: backoff like a transient error', err(401, 'auth'), 2, 7500],
  ])('%s', (_name, error, failures, expected) => {
    expect(registrationDelayMs(error, failures, TUNING, 0.5)).toBe(expected);
  });
});
