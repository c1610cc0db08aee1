import { describe, expect, it } from 'vitest';
import { buildHereLocation } from '../../src/sites/build.js';
import { CONTACT_TYPES, formatIssue, LOCATION_TYPES, locationForm, type OtmLocation } from '../../src/sites/site-types.js';
import { formatIssues, validateLocation, validateLocationBatch } from '../../src/sites/validate.js';
import { loadOtmSchemas } from '../helpers/otm-schema.js';

const ID = '11c11d75-e114-4b5f-9751-b3a4afa23ecf';
const point = (lat: number, lon: number) => ({ type: 'latLonPointGeoReference', lat, lon });

/** Form 1 with every optional field the command supports. */
const FULL_FORM_1 = {
  id: ID,
  name: 'Main warehouse',
  type: 'warehouse',
  geoReference: point(52.1956251, 5.4126792),
  administrativeReference: {
    name: 'Supermarket warehouse',
    street: 'Valutaboulevard',
    houseNumber: '16',
    houseNumberAddition: 'C',
    postalCode: '1825BT',
    city: 'Amersfoort',
    country: 'NL',
  },
  contactDetails: [
    { type: 'phone', value: '+31 20 1234 5678', remark: 'reception', language: 'nld' },
    { type: 'email', value: 'planning@example.com' },
    { type: 'name', value: 'J. de Vries' },
  ],
  remark: 'Dock 4 for deliveries',
  externalAttributes: { depotCode: 'AMF-01' },
};
const MIN_FORM_1 = {
  type: 'customer',
  geoReference: point(51.9225, 4.47917),
  administrativeReference: { name: 'Shop Rotterdam', city: 'Rotterdam' },
};
const FULL_FORM_2 = {
  id: ID,
  name: 'Customer Utrecht',
  type: 'customer',
  geoReference: {
    type: 'addressGeoReference',
    name: 'Customer Utrecht',
    street: 'Oudegracht',
    houseNumber: '100',
    houseNumberAddition: 'bis',
    postalCode: '3511AX',
    city: 'Utrecht',
    country: 'NL',
  },
  contactDetails: [{ type: 'mobilePhone', value: '06-12345678' }],
};
const MIN_FORM_2 = {
  type: 'store',
  geoReference: { type: 'addressGeoReference', name: 'Store Zwolle', street: 'Diezerstraat', city: 'Zwolle' },
};
const FULL_FORM_3 = {
  id: ID,
  entityType: 'location',
  name: 'Yard Venlo',
  type: 'operationalBase',
  geoReference: point(51.3704, 6.1724),
  remark: 'night parking',
};
const MIN_FORM_3 = { name: 'Yard Venlo', type: 'warehouse', geoReference: point(51.3704, 6.1724) };

const otm = await loadOtmSchemas();

describe('valid locations: the three forms of platform-spec 2.4', () => {
  const cases: [string, unknown, string][] = [
    ['form 1, all optional fields', FULL_FORM_1, 'coordinate-with-address'],
    ['form 1, minimal', MIN_FORM_1, 'coordinate-with-address'],
    ['form 2, all optional fields', FULL_FORM_2, 'address-only'],
    ['form 2, minimal', MIN_FORM_2, 'address-only'],
    ['form 3, all optional fields', FULL_FORM_3, 'coordinate-only'],
    ['form 3, minimal', MIN_FORM_3, 'coordinate-only'],
  ];
  it.each(cases)('%s is accepted and sent as an OTM5 location', (_name, input, form) => {
    const r = validateLocation(input, { newId: () => '00000000-0000-4000-8000-000000000001' });
    expect(formatIssues(r.errors)).toEqual([]);
    expect(r.warnings).toEqual([]);
    const loc = r.location as OtmLocation;
    expect(loc.entityType).toBe('location');
    expect(locationForm(loc)).toBe(form);
    if ((input as { id?: string }).id) {
      expect(loc.id).toBe(ID);
      expect(r.generatedId).toBe(false);
    } else {
      expect(loc.id).toBe('00000000-0000-4000-8000-000000000001');
      expect(r.generatedId).toBe(true);
    }
  });

  it('derives a stable UUID v5 from the site when no id is given: the same site, the same id', () => {
    const a = validateLocation(MIN_FORM_3);
    expect(a.location?.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(validateLocation(structuredClone(MIN_FORM_3)).location?.id).toBe(a.location?.id);
    expect(a.generatedId).toBe(true);
  });

  describe.skipIf(!otm)('every payload the commands produce validates against the OTM 5.6 location schema', () => {
    const produced: [string, unknown][] = [
      ...cases.map(([name, input]) => [`put: ${name}`, input] as [string, unknown]),
      [
        'here: form 3 (no address, no contacts)',
        buildHereLocation({ name: 'Yard', type: 'warehouse', lat: 52.19562512345, lon: 5.41267921 }),
      ],
      [
        'here: form 1 with address and contacts',
        buildHereLocation({
          id: ID,
          name: 'Depot',
          type: 'customer',
          lat: 52.1956251,
          lon: 5.4126792,
          address: { street: 'Valutaboulevard', houseNumber: '16', postalCode: '1825BT', city: 'Amersfoort', country: 'NL' },
          phone: '+31 33 123 4567',
          email: 'depot@example.com',
          contactName: 'Gate',
        }),
      ],
      [
        'here: form 1 with contacts only',
        buildHereLocation({ name: 'Depot', type: 'store', lat: 52.1, lon: 5.1, phone: '+31 33 123 4567' }),
      ],
      [
        'here: form 1 with address only',
        buildHereLocation({ name: 'Depot', type: 'store', lat: 52.1, lon: 5.1, address: { city: 'Amersfoort' } }),
      ],
    ];
    it.each(produced)('%s', (_name, input) => {
      const r = validateLocation(input);
      expect(formatIssues(r.errors)).toEqual([]);
      expect(otm!.validate('location', r.location)).toEqual([]);
    });

    it('the type and contact type lists of the validator are exactly the OTM 5.6 ones', () => {
      const schema = otm!.schema('location') as {
        properties: { type: { enum: string[] }; contactDetails: { items: { oneOf: { $ref: string }[] } } };
      };
      expect([...LOCATION_TYPES].sort()).toEqual([...schema.properties.type.enum].sort());
      const contactTypes = schema.properties.contactDetails.items.oneOf.map((o) => o.$ref.split('/').pop());
      expect([...CONTACT_TYPES].sort()).toEqual(contactTypes.sort());
    });

    it('the schema check is not vacuous: what this validator refuses, the OTM schema refuses too', () => {
      expect(otm!.validate('location', { ...validateLocation(MIN_FORM_3).location, type: 'depot' })).not.toEqual([]);
      expect(
        otm!.validate('location', {
          ...validateLocation(MIN_FORM_3).location,
          geoReference: { type: 'latLonPointGeoReference', lat: '52' },
        }),
      ).not.toEqual([]);
      expect(
        otm!.validate('location', { ...validateLocation(FULL_FORM_1).location, contactDetails: [{ type: 'fax', value: '1' }] }),
      ).not.toEqual([]);
      const { entityType: _e, ...withoutEntityType } = validateLocation(MIN_FORM_3).location as OtmLocation;
      expect(otm!.validate('location', withoutEntityType)).not.toEqual([]);
    });
  });
});

describe('invalid locations: every problem at once, with its field path', () => {
  const table: [string, unknown, string[]][] = [
    ['not an object', 'Amersfoort', ['must be an object, not the string "Amersfoort"']],
    ['latitude out of range', { ...MIN_FORM_3, geoReference: point(91, 5) }, ['geoReference.lat: must be between -90 and 90']],
    ['longitude out of range', { ...MIN_FORM_3, geoReference: point(52, 181) }, ['geoReference.lon: must be between -180 and 180']],
    [
      'latitude out of range but swapped it would fit',
      { ...MIN_FORM_3, geoReference: point(120, 52) },
      ['geoReference.lat: must be between -90 and 90 (got 120; latitude and longitude look swapped: did you mean lat 52, lon 120?)'],
    ],
    [
      'latitude as a quoted string',
      { ...MIN_FORM_3, geoReference: { type: 'latLonPointGeoReference', lat: '52.19', lon: 5.41 } },
      ['geoReference.lat: must be a number, not the string "52.19" (remove the quotes)'],
    ],
    ['longitude missing', { ...MIN_FORM_3, geoReference: { type: 'latLonPointGeoReference', lat: 52 } }, ['geoReference.lon: is required']],
    ['geoReference missing', { name: 'x', type: 'warehouse' }, ['geoReference: is required']],
    [
      'unknown geoReference type',
      { ...MIN_FORM_3, geoReference: { type: 'Feature' } },
      [
        'geoReference.type: must be latLonPointGeoReference (a coordinate: lat, lon) or addressGeoReference (an address the platform geocodes)',
      ],
    ],
    [
      'type missing',
      { name: 'x', geoReference: point(52, 5) },
      ['type: is required; one of warehouse, store, environmentalZone, restrictedArea, customer, operationalBase'],
    ],
    [
      'type not an OTM 5.6 value',
      { ...MIN_FORM_3, type: 'depot' },
      ['type: must be one of warehouse, store, environmentalZone, restrictedArea, customer, operationalBase (got the string "depot")'],
    ],
    [
      'id not a UUID',
      { ...MIN_FORM_3, id: 'depot-1' },
      ['id: must be a UUID such as 3f0c2a9e-5b1d-4c7e-9a2f-6d8b1e4c7a90 (got the string "depot-1"); leave it out to have one generated'],
    ],
    [
      'form 3 without a name',
      { type: 'warehouse', geoReference: point(52, 5) },
      [
        'name: is required for a location with a coordinate and no address (form 3 of a location: a coordinate with a top-level name and type)',
      ],
    ],
    [
      'form 1 without any name',
      { type: 'warehouse', geoReference: point(52.2, 5.4), administrativeReference: { city: 'Amersfoort' } },
      ['name: is required: set name, or administrativeReference.name'],
    ],
    [
      'address to geocode without city or postal code',
      { ...MIN_FORM_2, geoReference: { type: 'addressGeoReference', name: 'x', street: 'Main street' } },
      ['geoReference: an address the platform is to geocode needs at least a city or a postal code'],
    ],
    [
      'house number as a number',
      { ...MIN_FORM_1, administrativeReference: { name: 'x', houseNumber: 16, city: 'Rotterdam' } },
      ['administrativeReference.houseNumber: must be a string, not the number 16 (write "16")'],
    ],
    [
      'country in lower case',
      { ...MIN_FORM_1, administrativeReference: { name: 'x', city: 'Rotterdam', country: 'nl' } },
      ['administrativeReference.country: must be an ISO 3166-1 alpha-2 country code such as NL or DE (write "NL")'],
    ],
    [
      'empty street',
      { ...MIN_FORM_1, administrativeReference: { name: 'x', street: '  ', city: 'Rotterdam' } },
      ['administrativeReference.street: must not be empty (leave the field out instead)'],
    ],
    [
      'unknown contact type',
      { ...MIN_FORM_1, contactDetails: [{ type: 'fax', value: '+31 20 123 4567' }] },
      [
        'contactDetails[0].type: must be one of phone, mobilePhone, email, firstName, lastName, name, vatCode, gln, iban, eori, other (got the string "fax")',
      ],
    ],
    [
      'email that is not one',
      {
        ...MIN_FORM_1,
        contactDetails: [
          { type: 'phone', value: '+31 20 123 4567' },
          { type: 'email', value: 'planning.example.com' },
        ],
      },
      ['contactDetails[1].value: must be an email address such as planning@example.com (got the string "planning.example.com")'],
    ],
    [
      'phone that is not one',
      { ...MIN_FORM_1, contactDetails: [{ type: 'phone', value: 'call reception' }] },
      [
        'contactDetails[0].value: must be a phone number (digits, optionally +, spaces, dashes), e.g. +31 33 123 4567 (got the string "call reception")',
      ],
    ],
    ['contact without value', { ...MIN_FORM_1, contactDetails: [{ type: 'phone' }] }, ['contactDetails[0].value: is required']],
    [
      'coordinates at the top level',
      { ...MIN_FORM_3, lat: 52, lon: 5 },
      [
        'lat: unknown field: coordinates go in geoReference: {"type": "latLonPointGeoReference", "lat": ..., "lon": ...}',
        'lon: unknown field: coordinates go in geoReference: {"type": "latLonPointGeoReference", "lat": ..., "lon": ...}',
      ],
    ],
    [
      'misspelt field',
      { ...MIN_FORM_1, contactDetail: [] },
      [
        'contactDetail: unknown field (did you mean contactDetails?); allowed here: entityType, id, name, type, geoReference, administrativeReference, contactDetails, remark, externalAttributes, unCode, gln',
      ],
    ],
    [
      'wrong entityType',
      { ...MIN_FORM_3, entityType: 'vehicle' },
      ['entityType: must be "location" (got the string "vehicle"); it may be left out'],
    ],
    [
      'several problems are all reported',
      {
        id: 'x',
        type: 'depot',
        geoReference: { type: 'latLonPointGeoReference', lat: 95, lon: '5' },
        contactDetails: [{ type: 'email', value: 'nope' }],
      },
      [
        'id: must be a UUID such as 3f0c2a9e-5b1d-4c7e-9a2f-6d8b1e4c7a90 (got the string "x"); leave it out to have one generated',
        'type: must be one of warehouse, store, environmentalZone, restrictedArea, customer, operationalBase (got the string "depot")',
        'geoReference.lat: must be between -90 and 90',
        'geoReference.lon: must be a number, not the string "5" (remove the quotes)',
        'contactDetails[0].value: must be an email address such as planning@example.com (got the string "nope")',
        'name: is required: set name, or administrativeReference.name',
      ],
    ],
  ];

  it('has at least 15 cases', () => expect(table.length).toBeGreaterThanOrEqual(15));

  it.each(table)('%s', (_name, input, expected) => {
    const r = validateLocation(input);
    expect(r.ok).toBe(false);
    expect(r.location).toBeUndefined();
    expect(formatIssues(r.errors)).toEqual(expected);
  });
});

describe('warnings', () => {
  it('a Dutch location given as lat 5, lon 52 with country NL names the swap', () => {
    const r = validateLocation({ ...FULL_FORM_1, geoReference: point(5.4126792, 52.1956251) });
    expect(r.ok).toBe(true);
    expect(formatIssues(r.warnings)).toEqual([
      'geoReference: lat 5.4126792, lon 52.1956251 lies outside NL, but lat 52.1956251, lon 5.4126792 lies inside: latitude and longitude look swapped (did you mean lat 52.1956251, lon 5.4126792?)',
    ]);
  });

  it('without a country, the swap is still found when the swapped point lies in a known country and the given one in none', () => {
    const r = validateLocation({ ...MIN_FORM_3, geoReference: point(5.4126792, 52.1956251) });
    expect(formatIssues(r.warnings)).toEqual([
      'geoReference: lat 5.4126792, lon 52.1956251 lies in none of the countries this check knows, but lat 52.1956251, lon 5.4126792 lies in NL: latitude and longitude look swapped (did you mean lat 52.1956251, lon 5.4126792?; set administrativeReference.country to make this check exact)',
    ]);
  });

  it.each([
    ['Amersfoort, NL', 52.1956251, 5.4126792, 'NL'],
    ['Antwerp, BE', 51.2194, 4.4025, 'BE'],
    ['Madrid, ES', 40.4168, -3.7038, 'ES'],
    ['Gran Canaria, ES', 27.96, -15.58, 'ES'],
    ['New York, US', 40.7128, -74.006, 'US'],
    ['Sydney, AU', -33.8688, 151.2093, 'AU'],
    ['Nairobi, no country', -1.2921, 36.8219, undefined],
    ['Lisbon, no country', 38.7223, -9.1393, undefined],
  ])('no warning for a correct coordinate: %s', (_name, lat, lon, country) => {
    const r = validateLocation({
      ...MIN_FORM_1,
      geoReference: point(lat, lon),
      administrativeReference: { name: 'x', ...(country ? { country } : {}) },
    });
    expect(r.warnings).toEqual([]);
  });

  it('a coordinate outside the named country, and not fixed by swapping, is flagged as such', () => {
    const r = validateLocation({
      ...MIN_FORM_1,
      geoReference: point(48.8566, 2.3522),
      administrativeReference: { name: 'x', country: 'NL' },
    });
    expect(formatIssues(r.warnings)).toEqual([
      'geoReference: lat 48.8566, lon 2.3522 lies outside NL (administrativeReference.country); check the coordinate and the country',
    ]);
  });

  it('lat 0, lon 0 is flagged as a missing coordinate', () => {
    expect(formatIssues(validateLocation({ ...MIN_FORM_3, geoReference: point(0, 0) }).warnings)).toEqual([
      'geoReference: lat 0, lon 0 is in the Gulf of Guinea ("Null Island"): usually a missing coordinate, not a real site',
    ]);
  });

  it('an address without street warns that geocoding can only find the town', () => {
    const r = validateLocation({ ...MIN_FORM_2, geoReference: { type: 'addressGeoReference', name: 'x', city: 'Zwolle' } });
    expect(r.ok).toBe(true);
    expect(formatIssues(r.warnings)).toEqual([
      'geoReference.street: is missing: the platform can only place the location at the postal code or city, not at the site',
    ]);
  });
});

describe('batches', () => {
  it('validates each element, prefixes paths with the index and refuses the whole batch when one is invalid', () => {
    const b = validateLocationBatch([MIN_FORM_3, { ...MIN_FORM_3, geoReference: point(91, 5) }, MIN_FORM_2]);
    expect(b.ok).toBe(false);
    expect(b.isArray).toBe(true);
    expect(b.errors.map(formatIssue)).toEqual(['[1].geoReference.lat: must be between -90 and 90']);
    expect(b.items.map((i) => i.ok)).toEqual([true, false, true]);
  });

  it('refuses two elements with the same id', () => {
    const b = validateLocationBatch([{ ...MIN_FORM_3, id: ID }, MIN_FORM_2, { ...MIN_FORM_1, id: ID.toUpperCase() }]);
    expect(b.errors.map(formatIssue)).toEqual([
      '[2].id: is the same as [0].id; the platform stores one location per id, so the later one would overwrite the earlier',
    ]);
  });

  it('refuses an empty array and treats a single object as a batch of one', () => {
    expect(validateLocationBatch([]).errors.map(formatIssue)).toEqual(['the input is an empty array: there is no location to upload']);
    const one = validateLocationBatch(MIN_FORM_3);
    expect(one.ok).toBe(true);
    expect(one.isArray).toBe(false);
    expect(one.items).toHaveLength(1);
  });
});
