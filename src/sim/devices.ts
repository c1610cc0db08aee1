import { randomUUID } from 'node:crypto';
import type { Clock } from '../system/clock.js';
import { isPlainObject, json, type Reply } from './http-io.js';
import type { SimStats } from './stats.js';
import type { SimUser } from './tokens.js';

/** A device as the tracking device service returns it (platform contract, Device registration, response fields). */
export interface SimDevice {
  deviceUUID: string;
  externalSystemId: string;
  externalDeviceId: string;
  customerDeviceId: string;
  active: boolean;
  relation: string;
  carrierCode: string;
  creationDate: string;
  lastUpdatedDate: string;
  licensePlate?: string;
  driverName?: string;
  attributes?: Record<string, unknown>;
  /** The account that registered it last (not part of the platform's answer). */
  owner: string;
}

export interface DeviceServiceOptions {
  clock: Clock;
  stats: SimStats;
  /** Spelling of the UUID field in answers; the agent must accept any case (docs/platform-contract.md). */
  uuidFieldName?: string;
}

interface FieldProblem {
  field: string;
  message: string;
}

const REQUIRED_STRINGS = ['externalDeviceId', 'externalSystemId', 'carrierCode', 'customerDeviceId'] as const;
const OPTIONAL_STRINGS = ['licensePlate', 'driverName'] as const;

/** The tracking device service of the platform contract (Device registration): upsert keyed by (externalSystemId, externalDeviceId), retrieval. */
export class SimDeviceService {
  readonly #options: DeviceServiceOptions;
  readonly #devices = new Map<string, SimDevice>();

  constructor(options: DeviceServiceOptions) {
    this.#options = options;
  }

  get all(): SimDevice[] {
    return [...this.#devices.values()].map((d) => ({ ...d }));
  }

  /** POST / and PUT / (platform contract, Device registration: both upsert). */
  upsert(user: SimUser, body: unknown): Reply {
    const problems = validateDevice(body);
    if (problems.length > 0 || !isPlainObject(body)) {
      return json(400, {
        status: 400,
        error: 'Bad Request',
        message: problems.map((p) => `${p.field}: ${p.message}`).join('; '),
        errors: problems,
      });
    }
    const carrierCode = body.carrierCode as string;
    if (user.carriers !== undefined && !user.carriers.includes(carrierCode)) {
      return json(403, {
        status: 403,
        error: 'Forbidden',
        message: `account ${user.username} is not permitted to register devices for carrier ${carrierCode}`,
      });
    }
    const key = deviceKey(body.externalSystemId as string, body.externalDeviceId as string);
    const now = new Date(this.#options.clock.wallMs()).toISOString();
    const existing = this.#devices.get(key);
    const device: SimDevice = {
      deviceUUID: existing?.deviceUUID ?? randomUUID(),
      externalSystemId: body.externalSystemId as string,
      externalDeviceId: body.externalDeviceId as string,
      customerDeviceId: body.customerDeviceId as string,
      active: body.active as boolean,
      relation: existing?.relation ?? `relation-${carrierCode}`,
      carrierCode,
      creationDate: existing?.creationDate ?? now,
      lastUpdatedDate: now,
      owner: user.username,
      ...(typeof body.licensePlate === 'string' ? { licensePlate: body.licensePlate } : {}),
      ...(typeof body.driverName === 'string' ? { driverName: body.driverName } : {}),
      ...(isPlainObject(body.attributes) ? { attributes: body.attributes } : {}),
    };
    this.#devices.set(key, device);
    if (existing) this.#options.stats.devicesUpdated += 1;
    else this.#options.stats.devicesCreated += 1;
    return json(200, this.#present(device));
  }

  /** GET /: every device of the carriers associated with the account, as a JSON array. */
  list(user: SimUser): Reply {
    return json(
      200,
      [...this.#devices.values()].filter((d) => visibleTo(user, d)).map((d) => this.#present(d)),
    );
  }

  byExternalId(user: SimUser, externalSystemId: string, externalDeviceId: string): Reply {
    const d = this.#devices.get(deviceKey(externalSystemId, externalDeviceId));
    return d && visibleTo(user, d)
      ? json(200, this.#present(d))
      : notFound(`no device ${externalDeviceId} in external system ${externalSystemId}`);
  }

  byLicensePlate(user: SimUser, externalSystemId: string, licensePlate: string): Reply {
    const d = [...this.#devices.values()].find(
      (x) => x.externalSystemId === externalSystemId && x.licensePlate === licensePlate && visibleTo(user, x),
    );
    return d
      ? json(200, this.#present(d))
      : notFound(`no device with licence plate ${licensePlate} in external system ${externalSystemId}`);
  }

  #present(d: SimDevice): Record<string, unknown> {
    const { owner: _owner, deviceUUID, ...rest } = d;
    return { [this.#options.uuidFieldName ?? 'deviceUUID']: deviceUUID, ...rest };
  }
}

function deviceKey(externalSystemId: string, externalDeviceId: string): string {
  return `${externalSystemId}\u0000${externalDeviceId}`;
}

function visibleTo(user: SimUser, d: SimDevice): boolean {
  return user.carriers === undefined ? d.owner === user.username : user.carriers.includes(d.carrierCode);
}

function notFound(message: string): Reply {
  return json(404, { status: 404, error: 'Not Found', message });
}

/** The 400 body names every missing or mistyped field (docs/platform-contract.md: "body describes the format problem"). */
export function validateDevice(body: unknown): FieldProblem[] {
  if (!isPlainObject(body)) return [{ field: '(body)', message: 'must be a JSON object' }];
  const problems: FieldProblem[] = [];
  for (const f of REQUIRED_STRINGS) {
    const v = body[f];
    if (v === undefined || v === null) problems.push({ field: f, message: 'is required' });
    else if (typeof v !== 'string') problems.push({ field: f, message: `must be a string, got ${typeName(v)}` });
    else if (v.trim() === '') problems.push({ field: f, message: 'must not be empty' });
  }
  if (body.active === undefined || body.active === null) problems.push({ field: 'active', message: 'is required' });
  else if (typeof body.active !== 'boolean') problems.push({ field: 'active', message: `must be a boolean, got ${typeName(body.active)}` });
  for (const f of OPTIONAL_STRINGS) {
    const v = body[f];
    if (v !== undefined && v !== null && typeof v !== 'string')
      problems.push({ field: f, message: `must be a string, got ${typeName(v)}` });
  }
  if (body.attributes !== undefined && body.attributes !== null && !isPlainObject(body.attributes))
    problems.push({ field: 'attributes', message: `must be an object, got ${typeName(body.attributes)}` });
  return problems;
}

function typeName(v: unknown): string {
  return Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v;
}
