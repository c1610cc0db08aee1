import type { Address, ContactDetail } from './site-types.js';

/**
 * Builds the location `location here` sends, in the form (docs/platform-contract.md, Sites) that the given
 * facts call for: with an address or contact details, form 1 (coordinate + administrativeReference
 * + contactDetails); with neither, form 3 (coordinate + top-level name and type). The result is
 * validated like any file input (validate.ts) before it is sent. Form 2 (address only) has no
 * coordinate, so it only comes from files (`location put`).
 */

export interface HereLocationInput {
  id?: string;
  name: string;
  type: string;
  lat: number;
  lon: number;
  address?: Address;
  phone?: string;
  email?: string;
  /** A contact person's name (contact detail type `name`). */
  contactName?: string;
}

/** 7 decimals is about 1 cm: finer digits of an average are noise. */
const COORD_DECIMALS = 7;

export function buildHereLocation(input: HereLocationInput): Record<string, unknown> {
  const address = compact(input.address ?? {});
  const contacts: ContactDetail[] = [];
  if (input.contactName !== undefined) contacts.push({ type: 'name', value: input.contactName });
  if (input.phone !== undefined) contacts.push({ type: 'phone', value: input.phone });
  if (input.email !== undefined) contacts.push({ type: 'email', value: input.email });
  return {
    ...(input.id !== undefined ? { id: input.id } : {}),
    name: input.name,
    type: input.type,
    geoReference: { type: 'latLonPointGeoReference', lat: round(input.lat), lon: round(input.lon) },
    // The address block carries the site's name too, as the platform's examples do.
    ...(Object.keys(address).length > 0 ? { administrativeReference: { name: input.name, ...address } } : {}),
    ...(contacts.length > 0 ? { contactDetails: contacts } : {}),
  };
}

function round(v: number): number {
  return Number(v.toFixed(COORD_DECIMALS));
}

function compact(address: Address): Address {
  return Object.fromEntries(Object.entries(address).filter(([, v]) => v !== undefined)) as Address;
}
