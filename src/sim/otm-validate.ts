import { isPlainObject } from './http-io.js';

/**
 * The subset of OTM5 validation the simulator enforces, answering in the OTM5 API's 400 form:
 * an array of `{type, message, field}` with type invalidJson / invalidField / missingField
 * (docs/platform-contract.md, Positions). Tests validate payloads against the full OpenAPI document;
 * this is the platform side of that contract, strict where the agent must be right.
 */
export interface OtmError {
  type: 'invalidJson' | 'invalidField' | 'missingField';
  message: string;
  field: string;
}

type Errors = OtmError[];

const missing = (field: string): OtmError => ({ type: 'missingField', field, message: `${field} is required` });
const invalid = (field: string, message: string): OtmError => ({ type: 'invalidField', field, message: `${field} ${message}` });

export function invalidJson(message: string): OtmError[] {
  return [{ type: 'invalidJson', field: '', message: `body is not valid JSON: ${message}` }];
}

function optionalString(o: Record<string, unknown>, key: string, prefix: string, errors: Errors): void {
  const v = o[key];
  if (v !== undefined && typeof v !== 'string') errors.push(invalid(`${prefix}${key}`, 'must be a string'));
}

/** ISO 8601 date-time with a zone, as OTM5 writes creationDate. */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function latLon(g: Record<string, unknown>, prefix: string, errors: Errors): void {
  for (const [k, limit] of [
    ['lat', 90],
    ['lon', 180],
  ] as const) {
    const v = g[k];
    if (v === undefined || v === null) errors.push(missing(`${prefix}${k}`));
    else if (typeof v !== 'number' || !Number.isFinite(v)) errors.push(invalid(`${prefix}${k}`, 'must be a number'));
    else if (Math.abs(v) > limit) errors.push(invalid(`${prefix}${k}`, `must be between -${limit} and ${limit}`));
  }
}

function measure(g: Record<string, unknown>, key: string, prefix: string, errors: Errors): void {
  const m = g[key];
  if (m === undefined) return;
  if (!isPlainObject(m)) errors.push(invalid(`${prefix}${key}`, 'must be an object with value and unit'));
  else if (typeof m.value !== 'number' || !Number.isFinite(m.value)) errors.push(invalid(`${prefix}${key}.value`, 'must be a number'));
}

/** The movement and engine events a fleet management system sends (OTM5 components/schemas). */
export const VEHICLE_EVENT_TYPES: readonly string[] = ['startMovingEvent', 'stopMovingEvent', 'startEngineEvent', 'stopEngineEvent'];

/**
 * A locationUpdateEvent (or, with `vehicleEvents`, one of VEHICLE_EVENT_TYPES): eventType,
 * geoReference with lat/lon are required.
 */
export function validateLocationUpdateEvent(body: unknown, options: { vehicleEvents?: boolean } = {}): OtmError[] {
  if (!isPlainObject(body)) return [invalid('(body)', 'must be one event object')];
  const errors: Errors = [];
  const vehicle = options.vehicleEvents === true && VEHICLE_EVENT_TYPES.includes(body.eventType as string);
  if (body.eventType === undefined) errors.push(missing('eventType'));
  else if (body.eventType !== 'locationUpdateEvent' && !vehicle) errors.push(invalid('eventType', 'must be "locationUpdateEvent"'));
  optionalString(body, 'id', '', errors);
  optionalString(body, 'lifecycle', '', errors);
  if (
    body.creationDate !== undefined &&
    (typeof body.creationDate !== 'string' || !DATE_TIME.test(body.creationDate) || Number.isNaN(Date.parse(body.creationDate)))
  ) {
    errors.push(invalid('creationDate', 'must be an ISO 8601 date-time with a zone, e.g. 2026-11-22T08:00:00Z'));
  }
  const g = body.geoReference;
  if (g === undefined || g === null) errors.push(missing('geoReference'));
  else if (!isPlainObject(g)) errors.push(invalid('geoReference', 'must be an object'));
  else {
    if (g.type === undefined) errors.push(missing('geoReference.type'));
    else if (g.type !== 'latLonPointGeoReference') errors.push(invalid('geoReference.type', 'must be "latLonPointGeoReference"'));
    latLon(g, 'geoReference.', errors);
    measure(g, 'speed', 'geoReference.', errors);
    measure(g, 'heading', 'geoReference.', errors);
  }
  if (body.externalAttributes !== undefined && !isPlainObject(body.externalAttributes))
    errors.push(invalid('externalAttributes', 'must be an object'));
  if (body.vehicle !== undefined && !isPlainObject(body.vehicle)) errors.push(invalid('vehicle', 'must be an association object'));
  return errors;
}

const ADDRESS_FIELDS = ['name', 'street', 'houseNumber', 'houseNumberAddition', 'postalCode', 'city', 'province', 'country'] as const;

/** A location (platform contract, Sites): id and a geoReference of one of the two variants are required. */
export function validateLocation(body: unknown): OtmError[] {
  if (!isPlainObject(body)) return [invalid('(body)', 'must be one location object')];
  const errors: Errors = [];
  if (body.id === undefined || body.id === null) errors.push(missing('id'));
  else if (typeof body.id !== 'string' || body.id.trim() === '') errors.push(invalid('id', 'must be a non-empty string'));
  optionalString(body, 'type', '', errors);
  optionalString(body, 'name', '', errors);
  const g = body.geoReference;
  if (g === undefined || g === null) errors.push(missing('geoReference'));
  else if (!isPlainObject(g)) errors.push(invalid('geoReference', 'must be an object'));
  else if (g.type === 'latLonPointGeoReference') latLon(g, 'geoReference.', errors);
  else if (g.type === 'addressGeoReference') {
    for (const k of ADDRESS_FIELDS) optionalString(g, k, 'geoReference.', errors);
    if (!ADDRESS_FIELDS.some((k) => typeof g[k] === 'string' && g[k] !== '')) errors.push(missing('geoReference.street'));
  } else if (g.type === undefined) errors.push(missing('geoReference.type'));
  else errors.push(invalid('geoReference.type', 'must be "latLonPointGeoReference" or "addressGeoReference"'));
  const a = body.administrativeReference;
  if (a !== undefined) {
    if (!isPlainObject(a)) errors.push(invalid('administrativeReference', 'must be an object'));
    else for (const k of Object.keys(a)) optionalString(a, k, 'administrativeReference.', errors);
  }
  const c = body.contactDetails;
  if (c !== undefined) {
    if (!Array.isArray(c)) errors.push(invalid('contactDetails', 'must be an array'));
    else
      c.forEach((item: unknown, i) => {
        const p = `contactDetails[${i}].`;
        if (!isPlainObject(item)) errors.push(invalid(`contactDetails[${i}]`, 'must be an object with type and value'));
        else
          for (const k of ['type', 'value']) {
            if (item[k] === undefined) errors.push(missing(`${p}${k}`));
            else optionalString(item, k, p, errors);
          }
      });
  }
  return errors;
}
