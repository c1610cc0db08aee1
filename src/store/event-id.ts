import { createHash } from 'node:crypto';

/**
 * Name-based event ids (UUID version 5, RFC 9562 section 5.5: SHA-1 over namespace || name,
 * version and variant bits set). The same device and fix time always give the same id, so a
 * retry, a restart or a replay after a crash re-sends the id the platform already de-duplicates by.
 * node:crypto's SHA-1 is all it takes; no library needed.
 */

/** This agent's namespace for event ids: uuidv5(NAMESPACE_URL, "urn:telematics-agent:location-event"). */
export const EVENT_ID_NAMESPACE = uuidV5('urn:telematics-agent:location-event', '6ba7b811-9dad-11d1-80b4-00c04fd430c8');

/** The name hashed for one fix: device identity and fix time (epoch ms, from GNSS). */
export function eventIdName(externalSystemId: string, externalDeviceId: string, fixTimeMs: number): string {
  // Length-prefix the free-form ids so that ("a:b", "c") and ("a", "b:c") never collide.
  return `${externalSystemId.length}:${externalSystemId}|${externalDeviceId.length}:${externalDeviceId}|${fixTimeMs}`;
}

/** The 16 bytes of the event id of one fix (the outbox stores these). */
export function eventIdBytes(externalSystemId: string, externalDeviceId: string, fixTimeMs: number): Buffer {
  return uuidV5Bytes(eventIdName(externalSystemId, externalDeviceId, fixTimeMs), EVENT_ID_NAMESPACE);
}

/**
 * The 16 bytes of the event id of one vehicle event: the fix name with the eventType after it, so a
 * stop and a location update of the same GNSS millisecond never share an id, and the same stop
 * found again after a restart (same GNSS time) is the same event.
 */
export function vehicleEventIdBytes(externalSystemId: string, externalDeviceId: string, kind: string, timeMs: number): Buffer {
  return uuidV5Bytes(`${eventIdName(externalSystemId, externalDeviceId, timeMs)}|${kind}`, EVENT_ID_NAMESPACE);
}

export function uuidV5(name: string, namespace: string): string {
  return formatUuid(uuidV5Bytes(name, namespace));
}

export function uuidV5Bytes(name: string, namespace: string): Buffer {
  const ns = parseUuid(namespace);
  const hash = createHash('sha1').update(ns).update(name, 'utf8').digest();
  // Not from Node's shared 8 KiB Buffer pool (Buffer.from would slice it): a held fix's id kept its
  // whole slab alive, with the receiver's lines around it (docs/decisions/read-only-card.md).
  const bytes = Buffer.allocUnsafeSlow(16);
  hash.copy(bytes, 0, 0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50; // version 5
  bytes[8] = (bytes[8]! & 0x3f) | 0x80; // variant 10xx (RFC 9562)
  return bytes;
}

export function formatUuid(bytes: Uint8Array): string {
  if (bytes.length !== 16) throw new RangeError(`a UUID has 16 bytes, got ${bytes.length}`);
  const h = Buffer.from(bytes).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export function parseUuid(uuid: string): Buffer {
  const hex = uuid.replace(/-/g, '');
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) throw new RangeError(`not a UUID: ${uuid}`);
  return Buffer.from(hex, 'hex');
}
