/**
 * A site (depot, customer, yard: an OTM5 `location` entity, what `location put|here` sends) as this
 * agent sends it (docs/platform-contract.md, Sites; OTM 5.6 `components/schemas/location`). The folder is sites/
 * so that "location" is not read as a GPS position (src/fix/, OTM5 locationUpdateEvent). The enums
 * below are the OTM 5.6 values; the tests check them against the official OTM 5.6 OpenAPI document at
 * run time so that a drift cannot pass unnoticed.
 */

/** OTM 5.6 `location.type`. */
export const LOCATION_TYPES = ['warehouse', 'store', 'environmentalZone', 'restrictedArea', 'customer', 'operationalBase'] as const;
export type LocationType = (typeof LOCATION_TYPES)[number];

/** The subset the platform's documentation lists (docs/platform-contract.md, Sites); suggested in help. */
export const PLATFORM_LOCATION_TYPES: readonly LocationType[] = ['warehouse', 'store', 'customer'];

/** OTM 5.6 contact detail types (the discriminator values of `location.contactDetails[]`). */
export const CONTACT_TYPES = [
  'phone',
  'mobilePhone',
  'email',
  'firstName',
  'lastName',
  'name',
  'vatCode',
  'gln',
  'iban',
  'eori',
  'other',
] as const;
export type ContactType = (typeof CONTACT_TYPES)[number];

/** OTM5 `Address` fields; all optional strings, `country` ISO 3166-1 alpha-2. */
export const ADDRESS_FIELDS = ['name', 'street', 'houseNumber', 'houseNumberAddition', 'postalCode', 'city', 'country'] as const;
export type AddressField = (typeof ADDRESS_FIELDS)[number];
export type Address = Partial<Record<AddressField, string>>;

export interface LatLonPointGeoReference {
  type: 'latLonPointGeoReference';
  lat: number;
  lon: number;
}

export type AddressGeoReference = { type: 'addressGeoReference' } & Address;

export interface ContactDetail {
  type: ContactType;
  value: string;
  remark?: string;
  /** ISO 639-3. */
  language?: string;
}

/** A location ready to be sent: `entityType` and `id` are always set. */
export interface OtmLocation {
  entityType: 'location';
  id: string;
  name?: string;
  type?: LocationType;
  geoReference: LatLonPointGeoReference | AddressGeoReference;
  administrativeReference?: Address;
  contactDetails?: ContactDetail[];
  remark?: string;
  externalAttributes?: Record<string, unknown>;
  unCode?: string;
  gln?: string;
}

/**
 * The three forms of a location (docs/platform-contract.md, Sites):
 * 1. `coordinate-with-address`: latLonPointGeoReference plus administrativeReference (and contacts);
 * 2. `address-only`: addressGeoReference, the platform geocodes it;
 * 3. `coordinate-only`: latLonPointGeoReference plus a top-level name and type.
 */
export type LocationForm = 'coordinate-with-address' | 'address-only' | 'coordinate-only';

export function locationForm(location: Pick<OtmLocation, 'geoReference' | 'administrativeReference' | 'contactDetails'>): LocationForm {
  if (location.geoReference.type === 'addressGeoReference') return 'address-only';
  return location.administrativeReference !== undefined || (location.contactDetails?.length ?? 0) > 0
    ? 'coordinate-with-address'
    : 'coordinate-only';
}

/** Field-path problems (`geoReference.lat: must be between -90 and 90`). */
export interface LocationIssue {
  /** Dotted path with array indexes, e.g. `contactDetails[1].value`; '' for the whole location. */
  path: string;
  message: string;
}

export function formatIssue(issue: LocationIssue): string {
  return issue.path === '' ? issue.message : `${issue.path}: ${issue.message}`;
}

/** UUID form (8-4-4-4-12 hex). Not restricted to RFC 4122 versions: ids may come from other systems. */
export const UUID_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
