import type { z as Z } from 'zod';
import { loadZod } from '../config/zod.js';
import { ADDRESS_FIELDS, CONTACT_TYPES, LOCATION_TYPES, UUID_PATTERN } from './site-types.js';

/**
 * The structure of a location as this agent accepts it (docs/platform-contract.md, Sites and the OTM 5.6
 * `location` schema, restricted to what the platform documents). Every message is written for the
 * person who typed the file: what is allowed, and what was found. Cross-field rules (the three
 * forms, names, swapped coordinates) live in validate.ts because they must run even when a field
 * here is already wrong, so that all problems are reported at once.
 */

// One zod per process: the configuration's (CommonJS, config/zod.ts), not a second copy as an ES module.
const z = loadZod();

/** zod's `error` callback for a type mismatch: "is required" or "must be a number, not ...". */
function typeError(expected: 'string' | 'number' | 'object' | 'array') {
  return (issue: { input?: unknown; code?: string }) => {
    if (issue.input === undefined) return 'is required';
    const article = expected === 'object' || expected === 'array' ? 'an' : 'a';
    return `must be ${article} ${expected}, not ${describeValue(issue.input)}${typeHint(expected, issue.input)}`;
  };
}

export function describeValue(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v)}`;
  if (typeof v === 'number') return `the number ${v}`;
  if (typeof v === 'object') return 'an object';
  return `${typeof v} ${String(v)}`;
}

function typeHint(expected: string, input: unknown): string {
  if (expected === 'number' && typeof input === 'string' && input.trim() !== '' && Number.isFinite(Number(input)))
    return ' (remove the quotes)';
  if (expected === 'string' && typeof input === 'number') return ` (write "${input}")`;
  return '';
}

const text = () =>
  z.string({ error: typeError('string') }).refine((s) => s.trim() !== '', { message: 'must not be empty (leave the field out instead)' });

const oneOf = (values: readonly string[]) => (issue: { input?: unknown }) =>
  issue.input === undefined
    ? `is required; one of ${values.join(', ')}`
    : `must be one of ${values.join(', ')} (got ${describeValue(issue.input)})`;

const country = z.string({ error: typeError('string') }).refine((s) => /^[A-Z]{2}$/.test(s), { error: (i) => countryMessage(i.input) });

function countryMessage(input: unknown): string {
  const s = String(input);
  const hint = /^[a-zA-Z]{2}$/.test(s) ? ` (write "${s.toUpperCase()}")` : '';
  return `must be an ISO 3166-1 alpha-2 country code such as NL or DE${hint}`;
}

/** OTM5 `Address` (ADDRESS_FIELDS): all optional strings. */
const addressShape = {
  name: text().optional(),
  street: text().optional(),
  houseNumber: text().optional(),
  houseNumberAddition: text().optional(),
  postalCode: text().optional(),
  city: text().optional(),
  country: country.optional(),
} satisfies Record<(typeof ADDRESS_FIELDS)[number], Z.ZodType>;

export const addressSchema = z.strictObject(addressShape, { error: typeError('object') });

const latitude = z.number({ error: typeError('number') }).refine((v) => v >= -90 && v <= 90, { message: 'must be between -90 and 90' });
const longitude = z
  .number({ error: typeError('number') })
  .refine((v) => v >= -180 && v <= 180, { message: 'must be between -180 and 180' });

export const pointSchema = z.strictObject({ type: z.literal('latLonPointGeoReference'), lat: latitude, lon: longitude });
export const addressGeoSchema = z.strictObject({ type: z.literal('addressGeoReference'), ...addressShape });

export const GEO_TYPE_MESSAGE =
  'must be latLonPointGeoReference (a coordinate: lat, lon) or addressGeoReference (an address the platform geocodes)';

export const geoReferenceSchema = z.discriminatedUnion('type', [pointSchema, addressGeoSchema], {
  error: (issue) => ((issue.code as string) === 'invalid_type' ? typeError('object')(issue) : GEO_TYPE_MESSAGE),
});

/** Loose but useful: catches a phone number in the email field and the like. */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const PHONE = /^\+?[0-9 ()./-]{6,}$/;

export const contactSchema = z
  .strictObject(
    {
      type: z.enum(CONTACT_TYPES, { error: oneOf(CONTACT_TYPES) }),
      value: text(),
      remark: text().optional(),
      language: z
        .string({ error: typeError('string') })
        .refine((s) => /^[a-z]{3}$/.test(s), { message: 'must be an ISO 639-3 language code such as nld or eng' })
        .optional(),
    },
    { error: typeError('object') },
  )
  .superRefine((c, ctx) => {
    if (c.type === 'email' && !EMAIL.test(c.value))
      ctx.addIssue({
        code: 'custom',
        path: ['value'],
        message: `must be an email address such as planning@example.com (got ${describeValue(c.value)})`,
      });
    if ((c.type === 'phone' || c.type === 'mobilePhone') && (!PHONE.test(c.value) || (c.value.match(/[0-9]/g)?.length ?? 0) < 6)) {
      ctx.addIssue({
        code: 'custom',
        path: ['value'],
        message: `must be a phone number (digits, optionally +, spaces, dashes), e.g. +31 33 123 4567 (got ${describeValue(c.value)})`,
      });
    }
  });

export const LOCATION_FIELDS = [
  'entityType',
  'id',
  'name',
  'type',
  'geoReference',
  'administrativeReference',
  'contactDetails',
  'remark',
  'externalAttributes',
  'unCode',
  'gln',
] as const;

export const locationSchema = z.strictObject(
  {
    entityType: z
      .literal('location', {
        error: (i) => (i.input === undefined ? 'is required' : `must be "location" (got ${describeValue(i.input)}); it may be left out`),
      })
      .optional(),
    id: z
      .string({ error: typeError('string') })
      .refine((s) => UUID_PATTERN.test(s), {
        error: (i) =>
          `must be a UUID such as 3f0c2a9e-5b1d-4c7e-9a2f-6d8b1e4c7a90 (got ${describeValue(i.input)}); leave it out to have one generated`,
      })
      .optional(),
    name: text().optional(),
    type: z.enum(LOCATION_TYPES, { error: oneOf(LOCATION_TYPES) }),
    geoReference: geoReferenceSchema,
    administrativeReference: addressSchema.optional(),
    contactDetails: z.array(contactSchema, { error: typeError('array') }).optional(),
    remark: text().optional(),
    externalAttributes: z.record(z.string(), z.unknown(), { error: typeError('object') }).optional(),
    unCode: text().optional(),
    gln: text().optional(),
  },
  { error: typeError('object') },
);
