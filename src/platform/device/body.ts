import { createHash } from 'node:crypto';
import type { Config } from '../../config/load.js';
import type { DeviceIdentity } from '../contracts.js';

export type DeviceSection = Config['device'];

/** The register-or-update body (docs/platform-contract.md, Device registration: request fields) from the device section and the identity. */
export function deviceBody(device: DeviceSection, identity: DeviceIdentity): Record<string, unknown> {
  return {
    externalDeviceId: identity.externalDeviceId,
    externalSystemId: device.externalSystemId,
    active: device.active,
    carrierCode: device.carrierCode,
    customerDeviceId: device.customerDeviceId ?? identity.externalDeviceId,
    ...(device.licensePlate !== undefined ? { licensePlate: device.licensePlate } : {}),
    ...(device.driverName !== undefined ? { driverName: device.driverName } : {}),
    ...(device.attributes !== undefined ? { attributes: device.attributes } : {}),
  };
}

/** Hash of the body as sent: a change of any device setting (or of the identity) means one new upsert. */
export function bodyHash(body: Record<string, unknown>): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .filter((k) => o[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/** docs/platform-contract.md: the UUID field is spelled deviceUUID in the spec; accept any case. */
export function deviceUuidOf(body: unknown): string | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  for (const [k, v] of Object.entries(body as Record<string, unknown>)) {
    if (k.toLowerCase() === 'deviceuuid' && typeof v === 'string' && v.trim() !== '') return v;
  }
  return undefined;
}
