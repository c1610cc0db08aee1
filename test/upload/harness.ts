import { configSchemas, type RawConfig } from '../../src/config/schema.js';
import type { RegisteredDevice, RegistrationState } from '../../src/platform/contracts.js';
import { silentLogger, type Logger } from '../../src/log.js';
import { systemClock, type ManualClock } from '../../src/system/clock.js';
import { Uploader } from '../../src/upload/uploader.js';
import type { UploadBackoff } from '../../src/upload/retry-decision.js';
import { startPlatform, type Platform } from '../platform/fixture.js';
import { IDENTITY, openOutbox, type OpenOutbox } from '../store/outbox/helpers.js';
import { tempDir } from '../helpers/tmp.js';
import { waitFor } from '../helpers/wait.js';

export const DEVICE: RegisteredDevice = { ...IDENTITY, source: 'config', deviceUUID: '0d6f0b6e-3c1a-4b7e-9d3f-2a1b4c5d6e7f' };

/**
 * RegistrationState as the uploader sees it, registered by the test on demand. (The real
 * DeviceRegistrar is exercised end to end in test/e2e; here the test controls the moment.)
 */
export class TestRegistration implements RegistrationState {
  #device: RegisteredDevice | undefined;
  #waiters: ((d: RegisteredDevice) => void)[] = [];
  current(): RegisteredDevice | undefined {
    return this.#device;
  }
  whenRegistered(signal?: AbortSignal): Promise<RegisteredDevice> {
    if (this.#device) return Promise.resolve(this.#device);
    return new Promise((resolve, reject) => {
      this.#waiters.push(resolve);
      signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
    });
  }
  register(device: RegisteredDevice = DEVICE): void {
    this.#device = device;
    for (const w of this.#waiters.splice(0)) w(device);
  }
}

export interface UploadRig extends OpenOutbox {
  platform: Platform;
  registration: TestRegistration;
  uploader: Uploader;
}

/** The real simulator, token manager and requester, a real outbox file, and an uploader over them. */
export async function uploadRig(
  /** upload.* keys, and the backoff bounds (AgentOptions.tuning in the daemon; default 100 .. 2000 ms here). */
  upload: Partial<Omit<RawConfig['upload'], keyof UploadBackoff> & UploadBackoff> = {},
  /** clock: the uploader's clock and its backoff timers (the simulator and the token manager stay on real time). */
  opts: { licensePlate?: string; tls?: 'h2' | 'http/1.1'; clock?: ManualClock; logger?: Logger } = {},
): Promise<UploadRig> {
  const platform = await startPlatform({}, opts.tls ? { tls: opts.tls } : {});
  const ob = await openOutbox(tempDir(), { storage: { commitMaxFixes: 100 } });
  const { client } = platform.agent();
  const registration = new TestRegistration();
  const { minBackoffMs = 100, maxBackoffMs = 2000, ...keys } = upload;
  const uploader = new Uploader({
    queue: ob.outbox,
    requester: client,
    registration,
    eventsUrl: `${platform.urls.planningUrl}/otm/api/v5/events`,
    ...(opts.licensePlate ? { licensePlate: opts.licensePlate } : {}),
    upload: { ...configSchemas().configSchema.shape.upload.parse({}), ...keys },
    backoff: { minBackoffMs, maxBackoffMs },
    // Backoff waits are real timers (100 ms and up here) unless the test moves a manual clock.
    clock: opts.clock ?? systemClock,
    ...(opts.clock ? { timers: opts.clock } : {}),
    logger: opts.logger ?? silentLogger(),
  });
  await uploader.start();
  return { ...ob, platform, registration, uploader };
}

/** Stops what uploadRig started (the simulator is stopped by startPlatform's own cleanup). */
export async function closeRig(rig: UploadRig | undefined): Promise<void> {
  await rig?.uploader.stop(100);
  await rig?.outbox.stop();
  rig?.db.close();
}

/** Resolves once `cond()` holds, checking after every simulator request and every 20 ms; fails after 30 s. */
export function until(rig: UploadRig, cond: () => boolean, what = 'the condition'): Promise<void> {
  return waitFor(what, cond, { wakeOn: (check) => rig.platform.sim.onRequest(check) });
}

/**
 * Resolves once `cond()` holds, moving `clock` through each backoff the uploader waits in: only when
 * nothing is in flight, and then just to the backoff's end, so a request sent before it would show.
 */
export function untilWithBackoffs(rig: UploadRig, clock: ManualClock, cond: () => boolean, what = 'the condition'): Promise<void> {
  return until(
    rig,
    () => {
      if (cond()) return true;
      const at = clock.nextTimerAt();
      if (rig.uploader.status().inFlight === 0 && at !== undefined) clock.advance(at - clock.monotonicMs());
      return cond();
    },
    what,
  );
}

export const eventTimes = (rig: UploadRig): number[] =>
  [...rig.platform.sim.events.values()].map((e) => Date.parse(String(e.event.creationDate)));
