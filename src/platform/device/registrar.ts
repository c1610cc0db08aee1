import { setTimeout as sleep } from 'node:timers/promises';
import { AgentError, PlatformError, errorFields, isCorrupt } from '../../errors.js';
import type { Logger } from '../../log.js';
import { systemTimers, type Clock, type Timers } from '../../system/clock.js';
import { ClockStepWatch } from '../../system/clock-step.js';
import { probeHardwareId, type IdentityProbes } from '../../system/identity.js';
import type { AuthorizedRequester, DeviceIdentity, RegisteredDevice, RegistrationState } from '../contracts.js';
import { bodyHash, deviceBody, type DeviceSection } from './body.js';
import { DeviceClient } from './client.js';
import type { DeviceRecords, StoredRegistration } from './device-records.js';
import type { StartSpread } from './start-spread.js';
import { registrationDelayMs, type RegistrationRetryTuning } from './registration-delay.js';

export interface DeviceRegistrarOptions {
  /** The identity and last registration (store/device-store.ts in the agent). */
  records: DeviceRecords;
  requester: AuthorizedRequester;
  /** platform.deviceUrl. */
  deviceUrl: string;
  /** The device section of the configuration. */
  device: DeviceSection;
  probes: IdentityProbes;
  clock: Clock;
  logger: Logger;
  tuning: RegistrationRetryTuning;
  random?: () => number;
  /** The daemon's start-up spread (platform.startupJitterS): the first upsert waits for it. */
  startSpread?: StartSpread;
  /** Waits between attempts; injectable so tests can observe the chosen delays. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Default: the system's; the clock-step watch waits on them. */
  timers?: Timers;
}

export interface RegistrationStatus {
  state: 'unregistered' | 'registering' | 'registered' | 'config-error' | 'retrying';
  identity?: DeviceIdentity;
  deviceUUID?: string;
  registeredAt?: number;
  /** True while the stored registration is from an older device section (an update is pending). */
  updatePending: boolean;
  attempts: number;
  lastError?: { code: string; class: string; message: string; status?: number };
  /** Wall ms of the next attempt while waiting. */
  nextAttemptAt?: number;
}

/**
 * Device self-registration (docs/platform-contract.md, Device registration): resolves the identity once, upserts
 * on first start and again only when the device section changes (stored hash), and keeps trying
 * in the background: long waits for 400/403 (configuration), jittered backoff for 5xx/network,
 * 401 through the token manager. The uploader waits on whenRegistered().
 */
export class DeviceRegistrar implements RegistrationState {
  readonly #options: DeviceRegistrarOptions;
  readonly #store: DeviceRecords;
  readonly #client: DeviceClient;
  readonly #waiters = new Set<(d: RegisteredDevice) => void>();
  #abort = new AbortController();
  #loop: Promise<void> | undefined;
  #identity: DeviceIdentity | undefined;
  #current: RegisteredDevice | undefined;
  #status: RegistrationStatus = { state: 'unregistered', updatePending: false, attempts: 0 };
  #failures = 0;
  /** Ends the wait between attempts when the clock that TLS judged the certificate by is set. */
  readonly #clockStep: ClockStepWatch;
  #clockSet = new AbortController();
  /** The registration this process made, to be stored again in a swapped database (storeHeld). */
  #saved: StoredRegistration | undefined;

  constructor(options: DeviceRegistrarOptions) {
    this.#options = options;
    this.#store = options.records;
    this.#client = new DeviceClient({ requester: options.requester, deviceUrl: options.deviceUrl, clock: options.clock });
    this.#clockStep = new ClockStepWatch({
      clock: options.clock,
      timers: options.timers ?? systemTimers,
      logger: options.logger,
      then: 'retrying the device registration now',
      onStep: () => {
        // The failures were the clock's: the next one is a first again.
        this.#failures = 0;
        this.#clockSet.abort();
      },
    });
  }

  /** Resolves the identity and the stored registration; upserts in the background when needed. */
  async start(): Promise<void> {
    this.#abort = new AbortController();
    const identity = await this.identity();
    const body = deviceBody(this.#options.device, identity);
    const stored = this.#store.registration();
    const sameDevice =
      stored !== undefined &&
      stored.externalSystemId === identity.externalSystemId &&
      stored.externalDeviceId === identity.externalDeviceId;
    // deviceUUID never changes for the same (externalSystemId, externalDeviceId) (platform contract, Device registration), so a
    // pending update does not hold up the uploader.
    if (sameDevice && stored) {
      this.#saved = stored;
      this.#setCurrent({ ...identity, deviceUUID: stored.deviceUUID }, stored.registeredAt);
    }
    if (sameDevice && stored?.configHash === bodyHash(body)) {
      this.#options.logger.info(
        { deviceUUID: stored.deviceUUID, externalDeviceId: identity.externalDeviceId },
        'device registered earlier with this configuration: no upsert',
      );
      return;
    }
    this.#status.updatePending = sameDevice;
    this.#loop = this.#keepTrying(this.#abort.signal);
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    this.#clockStep.disarm();
    await this.#loop;
    this.#loop = undefined;
  }

  current(): RegisteredDevice | undefined {
    return this.#current;
  }

  whenRegistered(signal?: AbortSignal): Promise<RegisteredDevice> {
    if (this.#current) return Promise.resolve(this.#current);
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const done = (d: RegisteredDevice): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve(d);
      };
      const onAbort = (): void => {
        this.#waiters.delete(done);
        reject(signal?.reason);
      };
      this.#waiters.add(done);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  status(): RegistrationStatus {
    return { ...this.#status, ...(this.#identity ? { identity: this.#identity } : {}) };
  }

  /**
   * The identity: device.externalDeviceId when configured, else the one stored on first start,
   * else the hardware id probed now and stored for good.
   */
  async identity(): Promise<DeviceIdentity> {
    if (this.#identity) return this.#identity;
    const { device, clock, probes, logger } = this.#options;
    let id: { externalDeviceId: string; source: string };
    if (device.externalDeviceId !== undefined) id = { externalDeviceId: device.externalDeviceId, source: 'config' };
    else {
      const stored = this.#store.identity();
      if (stored) id = stored;
      else {
        const hw = await probeHardwareId(probes);
        try {
          id = this.#store.keepIdentity(hw.value, hw.source, clock.wallMs());
          logger.info({ externalDeviceId: id.externalDeviceId, source: id.source }, 'device identity chosen from the hardware and stored');
        } catch (e) {
          // A read-only card: the hardware gives the same identity at the next start.
          if (isCorrupt(e)) throw e;
          id = { externalDeviceId: hw.value, source: hw.source };
          logger.warn(
            { externalDeviceId: id.externalDeviceId, source: id.source, err: errorFields(e) },
            'device identity chosen from the hardware but not stored (read-only data directory?): stored at the next start that can write',
          );
        }
      }
    }
    this.#identity = { externalSystemId: device.externalSystemId, externalDeviceId: id.externalDeviceId, source: id.source };
    return this.#identity;
  }

  /** One upsert now (also `telematics-agent register`); stores and returns the platform's device. */
  async registerNow(signal?: AbortSignal): Promise<{ registered: RegisteredDevice; device: Record<string, unknown> }> {
    const identity = await this.identity();
    const body = deviceBody(this.#options.device, identity);
    this.#status.attempts += 1;
    const { device, deviceUUID } = await this.#client.upsert(body, signal);
    const previous = this.#current?.deviceUUID;
    if (previous !== undefined && previous !== deviceUUID)
      this.#options.logger.warn(
        { previous, deviceUUID },
        'the platform returned a different deviceUUID for the same device (the spec says it never changes): using the new one',
      );
    const registeredAt = this.#options.clock.wallMs();
    this.#saveRegistration({
      externalSystemId: identity.externalSystemId,
      externalDeviceId: identity.externalDeviceId,
      deviceUUID,
      configHash: bodyHash(body),
      response: device,
      registeredAt,
    });
    const registered = { ...identity, deviceUUID };
    this.#setCurrent(registered, registeredAt);
    this.#status.updatePending = false;
    delete this.#status.lastError;
    delete this.#status.nextAttemptAt;
    this.#failures = 0;
    this.#options.logger.info(
      { deviceUUID, externalSystemId: identity.externalSystemId, externalDeviceId: identity.externalDeviceId, source: identity.source },
      'device registered with the platform',
    );
    return { registered, device };
  }

  /** The device as the platform has it (GET by external device id); undefined when unknown there. */
  async fetch(signal?: AbortSignal): Promise<Record<string, unknown> | undefined> {
    const identity = await this.identity();
    return this.#client.byExternalId(identity.externalSystemId, identity.externalDeviceId, signal);
  }

  async #keepTrying(signal: AbortSignal): Promise<void> {
    const { logger, tuning, clock } = this.#options;
    const random = this.#options.random ?? Math.random;
    const wait = this.#options.sleep ?? ((ms: number, s: AbortSignal) => sleep(ms, undefined, { signal: s }));
    try {
      await this.#options.startSpread?.wait(signal, 'device upsert');
    } catch {
      return;
    }
    while (!signal.aborted) {
      if (this.#status.state !== 'registered') this.#status.state = 'registering';
      let delayMs: number;
      try {
        await this.registerNow(signal);
        this.#clockStep.disarm();
        return;
      } catch (e) {
        if (signal.aborted) return;
        const error =
          e instanceof AgentError
            ? e
            : new AgentError('DEVICE_REGISTRATION_FAILED', (e as Error)?.message ?? String(e), { class: 'internal', cause: e });
        this.#failures += 1;
        delayMs = registrationDelayMs(error, this.#failures, tuning, random());
        const status = error instanceof PlatformError ? error.status : undefined;
        const configProblem = error.errorClass === 'config';
        this.#status = {
          ...this.#status,
          // A pending update that fails transiently leaves the device registered (same deviceUUID).
          state: configProblem ? 'config-error' : this.#current ? 'registered' : 'retrying',
          lastError: { code: error.code, class: error.errorClass, message: error.message, ...(status !== undefined ? { status } : {}) },
          nextAttemptAt: clock.wallMs() + delayMs,
        };
        if (error.code === 'PLATFORM_TLS_CLOCK') this.#clockStep.arm();
        else this.#clockStep.disarm();
        const fields = { err: errorFields(error), retryInMs: delayMs, attempts: this.#status.attempts };
        if (configProblem) logger.error(fields, 'device registration refused: a configuration problem; retrying only after a long wait');
        else if (error.code === 'PLATFORM_TLS_CLOCK')
          // Not the configuration: TLS judged the certificate by a wrong system clock (the message says by how much).
          logger.warn(
            fields,
            "device registration failed: the platform's certificate is out of its dates by this system's clock; retrying with backoff",
          );
        else logger.warn(fields, 'device registration failed; retrying with backoff');
      }
      // A clock set during the attempt (it went out by the wrong clock) skips the wait as well.
      const clockSet = this.#clockSet;
      try {
        if (!clockSet.signal.aborted) await wait(delayMs, AbortSignal.any([signal, clockSet.signal]));
      } catch {
        if (signal.aborted) return;
      }
      if (clockSet.signal.aborted) this.#clockSet = new AbortController();
    }
  }

  /**
   * The platform has the device whether or not the card takes the record: on a read-only card
   * it is kept in memory and upserted once more at the next start (the upsert is
   * idempotent: platform contract, Device registration), rather than upserted again and again while the store refuses.
   */
  /**
   * The records were swapped under the platform (store-handle.ts): a salvage carries neither the
   * identity nor the registration over, and a read-only spell could not store them; the ones in
   * use go in, so that the next start neither probes again nor upserts again.
   */
  storeHeld(): void {
    const identity = this.#identity;
    try {
      if (identity && identity.source !== 'config' && !this.#store.identity())
        this.#store.keepIdentity(identity.externalDeviceId, identity.source, this.#options.clock.wallMs());
      const saved = this.#saved;
      // An update upserted meanwhile keeps the deviceUUID: the configuration hash tells it apart.
      const stored = this.#store.registration();
      if (saved && (stored?.deviceUUID !== saved.deviceUUID || stored.configHash !== saved.configHash)) this.#store.saveRegistration(saved);
    } catch (e) {
      if (isCorrupt(e)) throw e;
      // A read-only copy: kept in memory, tried at the next swap.
    }
  }

  #saveRegistration(r: Parameters<DeviceRecords['saveRegistration']>[0]): void {
    this.#saved = r;
    try {
      this.#store.saveRegistration(r);
    } catch (e) {
      if (isCorrupt(e)) throw e;
      this.#options.logger.warn(
        { err: errorFields(e), deviceUUID: r.deviceUUID },
        'device registered but the registration cannot be stored (read-only data directory?): kept in memory, upserted again at the next start',
      );
    }
  }

  #setCurrent(device: RegisteredDevice, registeredAt: number): void {
    this.#current = device;
    this.#status.state = 'registered';
    this.#status.deviceUUID = device.deviceUUID;
    this.#status.registeredAt = registeredAt;
    for (const w of this.#waiters) w(device);
    this.#waiters.clear();
  }
}
