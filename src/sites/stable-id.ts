import { createHash } from 'node:crypto';
import type { Address } from './site-types.js';

/**
 * The id of a location given without one: a UUID version 5 (RFC 9562 section 5.5, SHA-1 in a
 * namespace of this agent's own) of what identifies the site, so that uploading the same file
 * again updates the same locations instead of creating copies:
 *
 * 1. its GLN (GS1 Global Location Number), when it has one;
 * 2. else `externalAttributes.externalId`, the site's id in the customer's own system;
 * 3. else its name and address (street, house number and addition, postal code, city, country),
 *    compared without case, spacing or punctuation differences. The coordinate is not part of it:
 *    a site surveyed again with `location here` lands a few metres away and is still the same site.
 */
export const LOCATION_ID_NAMESPACE = '3f0d7d55-59f3-4a3e-9c38-2f0e8d6a1b47';

export interface StableIdSource {
  gln?: string;
  externalAttributes?: Record<string, unknown>;
  name?: string;
  geoReference: { type: string } & Address;
  administrativeReference?: Address;
}

export interface StableId {
  id: string;
  /** What it was derived from, for the message to the user. */
  from: 'gln' | 'externalAttributes.externalId' | 'name and address' | 'name';
}

export function stableLocationId(location: StableIdSource): StableId {
  const externalId = location.externalAttributes?.externalId;
  if (location.gln !== undefined && location.gln.trim() !== '') return { id: uuidV5(`gln:${location.gln.trim()}`), from: 'gln' };
  if (typeof externalId === 'string' && externalId.trim() !== '')
    return { id: uuidV5(`external:${externalId.trim()}`), from: 'externalAttributes.externalId' };
  const address: Address =
    location.geoReference.type === 'addressGeoReference' ? location.geoReference : (location.administrativeReference ?? {});
  const parts = [
    location.name ?? address.name,
    address.street,
    address.houseNumber,
    address.houseNumberAddition,
    address.postalCode,
    address.city,
    address.country,
  ].map(normalise);
  return { id: uuidV5(`site:${parts.join('|')}`), from: parts.slice(1).some((p) => p !== '') ? 'name and address' : 'name' };
}

/** "Valuta-Boulevard " and "valutaboulevard" are one street; "1825 BT" and "1825bt" one postal code. */
function normalise(value: string | undefined): string {
  return (value ?? '')
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\s\p{P}]+/gu, '');
}

export function uuidV5(name: string, namespace = LOCATION_ID_NAMESPACE): string {
  const ns = Buffer.from(namespace.replace(/-/g, ''), 'hex');
  const hash = createHash('sha1').update(ns).update(name, 'utf8').digest();
  hash[6] = ((hash[6] ?? 0) & 0x0f) | 0x50;
  hash[8] = ((hash[8] ?? 0) & 0x3f) | 0x80;
  const h = hash.subarray(0, 16).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}
