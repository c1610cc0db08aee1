import type { RegisteredDevice } from './contracts.js';

/**
 * One recorded fix as an OTM5 `locationUpdateEvent` (platform-notes.md "GPS positions"; schema
 * components/schemas/locationUpdateEvent of otm-api-v5.6.yaml). One fix is one event: OTM5 has no
 * per-point timestamps in latLonArrayGeoReference.
 */

/** What the event is made from: a fix as the outbox keeps it, with its id fixed at record time. */
export interface EventFix {
  eventId: string;
  /** Epoch ms UTC from the receiver. */
  time: number;
  lat: number;
  lon: number;
  /** Metres above mean sea level. */
  altMSL?: number;
  /** Speed over ground, m/s. */
  speed?: number;
  /** Course over ground, degrees true. */
  track?: number;
  hdop?: number;
  satellitesUsed?: number;
}

export interface EventVehicleOptions {
  /** device.licensePlate: sent inline so the platform can create or match the vehicle. */
  licensePlate?: string;
}

export interface Measure {
  value: number;
  unit: string;
}

export interface LocationUpdateEvent {
  eventType: 'locationUpdateEvent';
  id: string;
  creationDate: string;
  lifecycle: 'actual';
  geoReference: {
    type: 'latLonPointGeoReference';
    lat: number;
    lon: number;
    speed?: Measure;
    heading?: Measure;
  };
  vehicle?: { associationType: 'inline'; entity: { licensePlate: string } };
  externalAttributes: Record<string, unknown>;
}

const MPS_TO_KMH = 3.6;

export function toLocationUpdateEvent(fix: EventFix, device: RegisteredDevice, options: EventVehicleOptions = {}): LocationUpdateEvent {
  const geoReference: LocationUpdateEvent['geoReference'] = { type: 'latLonPointGeoReference', lat: fix.lat, lon: fix.lon };
  // Absent means unknown: never send a speed or heading of 0 the receiver did not report.
  if (fix.speed !== undefined) geoReference.speed = { value: round(fix.speed * MPS_TO_KMH, 2), unit: 'km/h' };
  if (fix.track !== undefined) geoReference.heading = { value: round(fix.track, 2), unit: 'degrees' };

  // Identifiers as plain strings, as the platform matches devices by them (platform-notes.md) and
  // as OTM5's own examples write external attributes ({"externalID": "photo1234"}); measurements
  // carry their unit in OTM5's {value, unit} form.
  const externalAttributes: Record<string, unknown> = {
    externalSystemId: device.externalSystemId,
    externalDeviceId: device.externalDeviceId,
    deviceUUID: device.deviceUUID,
  };
  if (fix.altMSL !== undefined) externalAttributes.altitude = { value: round(fix.altMSL, 2), unit: 'm' };
  if (fix.hdop !== undefined) externalAttributes.hdop = { value: round(fix.hdop, 2), unit: 'dimensionless' };
  if (fix.satellitesUsed !== undefined) externalAttributes.satellitesUsed = { value: fix.satellitesUsed, unit: 'count' };

  const event: LocationUpdateEvent = {
    eventType: 'locationUpdateEvent',
    id: fix.eventId,
    // The platform reads creationDate as the measurement time: the GNSS time, never the host clock.
    creationDate: new Date(fix.time).toISOString(),
    lifecycle: 'actual',
    geoReference,
    externalAttributes,
  };
  if (options.licensePlate !== undefined) event.vehicle = { associationType: 'inline', entity: { licensePlate: options.licensePlate } };
  return event;
}

function round(n: number, decimals: number): number {
  const f = 10 ** decimals;
  return Math.round(n * f) / f;
}
