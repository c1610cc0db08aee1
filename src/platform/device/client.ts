import { PlatformError } from '../../errors.js';
import type { Clock } from '../../system/clock.js';
import type { AuthorizedRequester } from '../contracts.js';
import { deviceUuidOf } from './body.js';
import { errorFromResponse } from '../transport/http-errors.js';
import { configHint, statusMeaning } from '../../retry/status-table.js';

/** The tracking device service (platform contract, Device registration) over the AuthorizedRequester. */
export class DeviceClient {
  readonly #requester: AuthorizedRequester;
  readonly #base: string;
  readonly #clock: Pick<Clock, 'wallMs'>;

  constructor(options: { requester: AuthorizedRequester; deviceUrl: string; clock: Pick<Clock, 'wallMs'> }) {
    this.#requester = options.requester;
    this.#base = options.deviceUrl.endsWith('/') ? options.deviceUrl : `${options.deviceUrl}/`;
    this.#clock = options.clock;
  }

  /** PUT / (platform contract, Device registration: POST and PUT both upsert); returns the device and its deviceUUID. */
  async upsert(body: Record<string, unknown>, signal?: AbortSignal): Promise<{ device: Record<string, unknown>; deviceUUID: string }> {
    const res = await this.#requester.send({ method: 'PUT', url: this.#base, json: body, ...(signal ? { signal } : {}) });
    if (res.status !== 200 && res.status !== 201) throw this.#error(res, 'device registration');
    const deviceUUID = deviceUuidOf(res.body);
    if (deviceUUID === undefined) {
      throw new PlatformError('DEVICE_RESPONSE_MALFORMED', `device registration: HTTP ${res.status} answer has no deviceUUID`, {
        class: 'transient',
        status: res.status,
      });
    }
    return { device: res.body as Record<string, unknown>, deviceUUID };
  }

  /** GET external-system/{id}/external-device/{id}; undefined when the platform answers 404. */
  async byExternalId(
    externalSystemId: string,
    externalDeviceId: string,
    signal?: AbortSignal,
  ): Promise<Record<string, unknown> | undefined> {
    const url = `${this.#base}external-system/${encodeURIComponent(externalSystemId)}/external-device/${encodeURIComponent(externalDeviceId)}`;
    const res = await this.#requester.send({ method: 'GET', url, ...(signal ? { signal } : {}) });
    if (res.status === 404) return undefined;
    if (res.status !== 200) throw this.#error(res, 'device retrieval');
    return res.body as Record<string, unknown>;
  }

  /** GET external-system/{id}/license-plate/{plate}; undefined when the platform answers 404. */
  async byLicensePlate(externalSystemId: string, licensePlate: string, signal?: AbortSignal): Promise<Record<string, unknown> | undefined> {
    const url = `${this.#base}external-system/${encodeURIComponent(externalSystemId)}/license-plate/${encodeURIComponent(licensePlate)}`;
    const res = await this.#requester.send({ method: 'GET', url, ...(signal ? { signal } : {}) });
    if (res.status === 404) return undefined;
    if (res.status !== 200) throw this.#error(res, 'device retrieval');
    return res.body as Record<string, unknown>;
  }

  /**
   * GET /: every device of the carriers of the account. The spec does not show whether the answer
   * is a list, one object, or a page wrapping a list (4.2 rule 3), so each is taken.
   */
  async list(signal?: AbortSignal): Promise<Record<string, unknown>[]> {
    const res = await this.#requester.send({ method: 'GET', url: this.#base, ...(signal ? { signal } : {}) });
    if (res.status !== 200) throw this.#error(res, 'device list');
    return devicesOf(res.body);
  }

  #error(res: Parameters<typeof errorFromResponse>[0], what: string): PlatformError {
    const e = errorFromResponse(res, what, this.#clock.wallMs(), 'device');
    if (statusMeaning('device', res.status) !== 'config') return e;
    // The device column of retry/status-table.ts (docs/platform-contract.md: 400 and 403 are configuration problems).
    const hint = configHint('device', res.status);
    return new PlatformError(e.code, `${e.message}; ${hint}`, {
      class: 'config',
      retryable: true,
      status: res.status,
      ...(e.details ? { details: e.details } : {}),
    });
  }
}

function devicesOf(body: unknown): Record<string, unknown>[] {
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (Array.isArray(body)) return body.filter(isObject);
  if (!isObject(body)) return [];
  for (const key of ['content', 'items', 'devices', 'data', 'results']) {
    const inner = body[key];
    if (Array.isArray(inner)) return inner.filter(isObject);
  }
  return [body];
}
