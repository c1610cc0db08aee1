import type { z } from 'zod';
import { ADDRESS_FIELDS, formatIssue, type LocationIssue, type OtmLocation } from './site-types.js';
import { LOCATION_FIELDS, locationSchema } from './location-schema.js';
import { countriesAt } from './country-boxes.js';
import { swapWarnings } from './swap-check.js';
import { stableLocationId, type StableId } from './stable-id.js';

/**
 * Validation of one location or a batch (docs/platform-contract.md, Sites). Every problem is reported at once
 * with its field path; warnings (swapped coordinates, Null Island, an address without street) do
 * not block sending. The OTM5 `entityType` is added, and an `id` derived from the site when absent
 * (stable-id.ts: the same input gives the same id, so uploading it again updates).
 */

export interface LocationValidation {
  ok: boolean;
  /** Set when ok: the payload to send. */
  location?: OtmLocation;
  /** True when `location.id` was not in the input but derived here (the user must be told it). */
  generatedId: boolean;
  /** What a derived id was derived from. */
  idFrom?: StableId['from'];
  errors: LocationIssue[];
  warnings: LocationIssue[];
}

export interface ValidateOptions {
  /** Id for a location without one; default: derived from the site (stable-id.ts). */
  newId?: () => string;
}

export function validateLocation(input: unknown, options: ValidateOptions = {}): LocationValidation {
  const result = locationSchema.safeParse(input);
  const errors: LocationIssue[] = result.success ? [] : result.error.issues.flatMap((i) => fromZod(i, input));
  const warnings: LocationIssue[] = [];
  if (isObject(input)) crossFieldRules(input, errors, warnings);
  if (!result.success || errors.length > 0) return { ok: false, generatedId: false, errors: dedupe(errors), warnings };

  const { entityType: _e, id, name, type, geoReference, administrativeReference, contactDetails, ...rest } = result.data;
  const derived =
    id !== undefined || options.newId !== undefined
      ? undefined
      : stableLocationId({
          ...rest,
          ...(name !== undefined ? { name } : {}),
          geoReference,
          ...(administrativeReference ? { administrativeReference } : {}),
        });
  const location: OtmLocation = {
    entityType: 'location',
    id: id ?? derived?.id ?? options.newId?.() ?? '',
    ...(name !== undefined ? { name } : {}),
    type,
    geoReference,
    ...(administrativeReference !== undefined ? { administrativeReference } : {}),
    ...(contactDetails !== undefined ? { contactDetails } : {}),
    ...rest,
  };
  return { ok: true, location, generatedId: id === undefined, ...(derived ? { idFrom: derived.from } : {}), errors: [], warnings };
}

export interface BatchValidation {
  ok: boolean;
  /** One entry per location in the input, in order. */
  items: LocationValidation[];
  /** All errors, paths prefixed with `[index].` when the input was an array. */
  errors: LocationIssue[];
  warnings: LocationIssue[];
  /** The input was a JSON array (so output names items by index). */
  isArray: boolean;
}

/** A single location object, or a JSON array of them. Nothing is valid unless everything is. */
export function validateLocationBatch(input: unknown, options: ValidateOptions = {}): BatchValidation {
  if (!Array.isArray(input)) {
    const one = validateLocation(input, options);
    return { ok: one.ok, items: [one], errors: one.errors, warnings: one.warnings, isArray: false };
  }
  if (input.length === 0)
    return {
      ok: false,
      items: [],
      errors: [{ path: '', message: 'the input is an empty array: there is no location to upload' }],
      warnings: [],
      isArray: true,
    };
  const items = input.map((entry) => validateLocation(entry, options));
  const errors = items.flatMap((it, i) => it.errors.map((e) => prefixed(i, e)));
  const warnings = items.flatMap((it, i) => it.warnings.map((w) => prefixed(i, w)));
  // Two entries with one id would silently overwrite each other (the platform upserts by id).
  const firstIndexOfId = new Map<string, number>();
  input.forEach((entry, i) => {
    const id = isObject(entry) && typeof entry.id === 'string' ? entry.id : undefined;
    if (id === undefined) return;
    const first = firstIndexOfId.get(id.toLowerCase());
    if (first === undefined) firstIndexOfId.set(id.toLowerCase(), i);
    else
      errors.push({
        path: `[${i}].id`,
        message: `is the same as [${first}].id; the platform stores one location per id, so the later one would overwrite the earlier`,
      });
  });
  // Two entries without an id that describe the same site derive the same id, just the same.
  const firstIndexOfDerived = new Map<string, number>();
  items.forEach((item, i) => {
    if (!item.generatedId || item.location === undefined) return;
    const first = firstIndexOfDerived.get(item.location.id);
    if (first === undefined) firstIndexOfDerived.set(item.location.id, i);
    else
      errors.push({
        path: `[${i}]`,
        message: `has the same ${item.idFrom ?? 'name and address'} as [${first}], so both would get id ${item.location.id} and the later would overwrite the earlier; give them different ids`,
      });
  });
  return { ok: errors.length === 0, items, errors: byIndex(errors), warnings, isArray: true };
}

export function formatIssues(issues: readonly LocationIssue[]): string[] {
  return issues.map(formatIssue);
}

/** The rules that span fields: the three forms of a location (docs/platform-contract.md, Sites), names, coordinate sanity. */
function crossFieldRules(input: Record<string, unknown>, errors: LocationIssue[], warnings: LocationIssue[]): void {
  const geo = isObject(input.geoReference) ? input.geoReference : undefined;
  const admin = isObject(input.administrativeReference) ? input.administrativeReference : undefined;
  const nameMissing = input.name === undefined;

  if (geo?.type === 'latLonPointGeoReference') {
    const formThree = input.administrativeReference === undefined && input.contactDetails === undefined;
    if (formThree && nameMissing) {
      errors.push({
        path: 'name',
        message:
          'is required for a location with a coordinate and no address (form 3 of a location: a coordinate with a top-level name and type)',
      });
    } else if (!formThree && nameMissing && !isText(admin?.name)) {
      errors.push({ path: 'name', message: 'is required: set name, or administrativeReference.name' });
    }
    pointRules(geo, admin, errors, warnings);
  } else if (geo?.type === 'addressGeoReference') {
    if (nameMissing && !isText(geo.name)) errors.push({ path: 'name', message: 'is required: set name, or geoReference.name' });
    if (!isText(geo.city) && !isText(geo.postalCode)) {
      errors.push({
        path: 'geoReference',
        message: 'an address the platform is to geocode needs at least a city or a postal code',
      });
    } else if (!isText(geo.street)) {
      warnings.push({
        path: 'geoReference.street',
        message: 'is missing: the platform can only place the location at the postal code or city, not at the site',
      });
    }
  }
}

function pointRules(
  geo: Record<string, unknown>,
  admin: Record<string, unknown> | undefined,
  errors: LocationIssue[],
  warnings: LocationIssue[],
): void {
  const { lat, lon } = geo;
  if (typeof lat !== 'number' || typeof lon !== 'number') return;
  // Out of range, but the other way round a point in a known country: say so in the range error.
  if (Math.abs(lat) > 90 && Math.abs(lon) <= 90 && Math.abs(lat) <= 180 && countriesAt(lon, lat).length > 0) {
    const e = errors.find((x) => x.path === 'geoReference.lat');
    if (e) e.message += ` (got ${lat}; latitude and longitude look swapped: did you mean lat ${lon}, lon ${lat}?)`;
    return;
  }
  if (Math.abs(lat) > 90 || Math.abs(lon) > 180) return;
  if (lat === 0 && lon === 0) {
    warnings.push({
      path: 'geoReference',
      message: 'lat 0, lon 0 is in the Gulf of Guinea ("Null Island"): usually a missing coordinate, not a real site',
    });
    return;
  }
  const country = typeof admin?.country === 'string' && /^[A-Z]{2}$/.test(admin.country) ? admin.country : undefined;
  warnings.push(...swapWarnings(lat, lon, country));
}

/** zod issue -> field-path issues (unknown keys become one issue per key, with a suggestion). */
function fromZod(issue: z.core.$ZodIssue, input: unknown): LocationIssue[] {
  const path = formatPath(issue.path);
  if (issue.code === 'unrecognized_keys') {
    const allowed = allowedKeysAt(issue.path, input);
    return issue.keys.map((key) => ({
      path: path === '' ? key : `${path}.${key}`,
      message: unknownKeyMessage(key, issue.path.length === 0, allowed),
    }));
  }
  if (issue.code === 'invalid_type' && issue.message.startsWith('Invalid input')) {
    return [{ path, message: `must be ${issue.expected}` }];
  }
  return [{ path, message: issue.message }];
}

function allowedKeysAt(path: readonly PropertyKey[], input: unknown): readonly string[] {
  const head = path[0];
  if (path.length === 0) return LOCATION_FIELDS;
  if (head === 'administrativeReference') return ADDRESS_FIELDS;
  if (head === 'contactDetails') return ['type', 'value', 'remark', 'language'];
  if (head === 'geoReference') {
    const geo = isObject(input) && isObject(input.geoReference) ? input.geoReference : undefined;
    return geo?.type === 'addressGeoReference' ? ['type', ...ADDRESS_FIELDS] : ['type', 'lat', 'lon'];
  }
  return [];
}

/** Common misplacements get a specific hint; otherwise the nearest allowed name, if close. */
const ROOT_HINTS: Record<string, string> = {
  lat: 'coordinates go in geoReference: {"type": "latLonPointGeoReference", "lat": ..., "lon": ...}',
  lon: 'coordinates go in geoReference: {"type": "latLonPointGeoReference", "lat": ..., "lon": ...}',
  latitude: 'coordinates go in geoReference: {"type": "latLonPointGeoReference", "lat": ..., "lon": ...}',
  longitude: 'coordinates go in geoReference: {"type": "latLonPointGeoReference", "lat": ..., "lon": ...}',
  adress: 'an address goes in administrativeReference (with a coordinate) or in geoReference with type addressGeoReference (without one)',
  address: 'an address goes in administrativeReference (with a coordinate) or in geoReference with type addressGeoReference (without one)',
  street: 'an address goes in administrativeReference (with a coordinate) or in geoReference with type addressGeoReference (without one)',
  city: 'an address goes in administrativeReference (with a coordinate) or in geoReference with type addressGeoReference (without one)',
  contacts: 'contact details go in contactDetails: [{"type": "phone", "value": "..."}]',
};

function unknownKeyMessage(key: string, atRoot: boolean, allowed: readonly string[]): string {
  const hint = atRoot ? ROOT_HINTS[key] : undefined;
  if (hint) return `unknown field: ${hint}`;
  // Short names are all close to each other: only suggest when the typo is small for its length.
  const limit = key.length >= 6 ? 2 : 1;
  const near =
    allowed.find((a) => a.toLowerCase() === key.toLowerCase()) ??
    allowed.find((a) => editDistance(a.toLowerCase(), key.toLowerCase()) <= limit);
  return `unknown field${near ? ` (did you mean ${near}?)` : ''}; allowed here: ${allowed.join(', ')}`;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] ?? 0;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j] ?? 0;
      row[j] = Math.min(cur + 1, (row[j - 1] ?? 0) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length] ?? 0;
}

export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out === '' ? String(p) : `.${String(p)}`;
  return out;
}

function prefixed(index: number, issue: LocationIssue): LocationIssue {
  return {
    path: issue.path === '' ? `[${index}]` : issue.path.startsWith('[') ? `[${index}]${issue.path}` : `[${index}].${issue.path}`,
    message: issue.message,
  };
}

/** Stable sort of `[i]...` issues by i, so each location's problems read together. */
function byIndex(issues: LocationIssue[]): LocationIssue[] {
  const index = (i: LocationIssue) => Number(/^\[(\d+)\]/.exec(i.path)?.[1] ?? -1);
  return issues
    .map((issue, order) => ({ issue, order }))
    .sort((a, b) => index(a.issue) - index(b.issue) || a.order - b.order)
    .map((x) => x.issue);
}

function dedupe(issues: LocationIssue[]): LocationIssue[] {
  const seen = new Set<string>();
  return issues.filter((i) => {
    const k = formatIssue(i);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isText(v: unknown): v is string {
  return typeof v === 'string' && v.trim() !== '';
}
