import type { RegisteredDevice } from '../contracts.js';
import type { QueuedFix } from '../../fix/fix.js';

/**
 * One recorded fix as an OTM5 `locationUpdateEvent` (docs/platform-contract.md, Positions; schema
 * components/schemas/locationUpdateEvent of otm-api-v5.6.yaml). One fix is one event: OTM5 has no
 * per-point timestamps in latLonArrayGeoReference.
 *
 * Every byte goes over a SIM, so the body carries what the platform needs to place the
 * position and nothing else by default (`upload.eventDetail: "position"`):
 * - the event id (the idempotency key), the GNSS time (milliseconds only when it has them), `lifecycle: "actual"`
 *   (a measured position, not a planned or projected one);
 * - lat/lon rounded to 7 decimals (about 1 cm, as the outbox stores them);
 * - speed in km/h and heading in degrees, each to 0.1: NMEA gives speed in knots with 1-3 decimals
 *   and the track in degrees with 1-2, but a good receiver's Doppler speed is accurate to about
 *   0.05 m/s (0.18 km/h) and its course to about 0.3 degrees (u-blox M8/M9 data sheets), so a
 *   finer figure only sends noise; 0.1 km/h is also finer than a 1-decimal knot (0.185 km/h);
 * - the vehicle: the licence plate inline when one is configured (the platform creates or matches
 *   the vehicle by it), otherwise the device identity (externalSystemId + externalDeviceId) in
 *   externalAttributes, as the platform notes prescribe.
 * `"full"` adds the facts the platform does not need to place the position: both identities,
 * deviceUUID, altitude, HDOP and satellites used.
 *
 * The body is a pure function of the stored fix, the registered identity and the configuration, so
 * a re-send after a crash is the same event under the same id.
 */

/** `upload.eventDetail`. */
export type EventDetail = 'position' | 'full';

export interface EventVehicleOptions {
  /** device.licensePlate: sent inline so the platform can create or match the vehicle. */
  licensePlate?: string;
  /** Default "position". */
  detail?: EventDetail;
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
  externalAttributes?: Record<string, unknown>;
}

/**
 * Headers of every event request. `Prefer: return=minimal` (RFC 7240 section 4.2) asks the
 * platform not to echo the entity back (the echo doubled the bytes per event); a server that does
 * not know the preference ignores it and answers as before, which the uploader accepts too.
 */
export const EVENT_REQUEST_HEADERS: Readonly<Record<string, string>> = Object.freeze({ prefer: 'return=minimal' });

const MPS_TO_KMH = 3.6;

export function toLocationUpdateEvent(fix: QueuedFix, device: RegisteredDevice, options: EventVehicleOptions = {}): LocationUpdateEvent {
  const full = options.detail === 'full';
  const geoReference: LocationUpdateEvent['geoReference'] = {
    type: 'latLonPointGeoReference',
    lat: round(fix.lat, 7),
    lon: round(fix.lon, 7),
  };
  // Absent means unknown: never send a speed or heading of 0 the receiver did not report.
  if (fix.speed !== undefined) geoReference.speed = { value: round(fix.speed * MPS_TO_KMH, 1), unit: 'km/h' };
  if (fix.track !== undefined) geoReference.heading = { value: round(fix.track, 1) % 360, unit: 'degrees' };

  const event: LocationUpdateEvent = {
    eventType: 'locationUpdateEvent',
    id: fix.eventId,
    // The platform reads creationDate as the measurement time: the GNSS time, never the host clock.
    // Whole seconds (a 1 Hz receiver's every fix) without ".000": RFC 3339 makes the fraction
    // optional, and the event goes up and comes back echoed (8 B an event).
    creationDate: new Date(fix.time).toISOString().replace('.000Z', 'Z'),
    lifecycle: 'actual',
    geoReference,
  };
  const plate = options.licensePlate;
  if (plate !== undefined) event.vehicle = { associationType: 'inline', entity: { licensePlate: plate } };
  if (full || plate === undefined) {
    // Identifiers as plain strings, as the platform matches devices by them (docs/platform-contract.md).
    event.externalAttributes = { externalSystemId: device.externalSystemId, externalDeviceId: device.externalDeviceId };
  }
  if (full) {
    // Measurements carry their unit in OTM5's {value, unit} form.
    const x = event.externalAttributes!;
    x.deviceUUID = device.deviceUUID;
    if (fix.altMSL !== undefined) x.altitude = { value: round(fix.altMSL, 2), unit: 'm' };
    if (fix.hdop !== undefined) x.hdop = { value: round(fix.hdop, 2), unit: 'dimensionless' };
    if (fix.satellitesUsed !== undefined) x.satellitesUsed = { value: fix.satellitesUsed, unit: 'count' };
  }
  return event;
}

function round(n: number, decimals: number): number {
  const f = 10 ** decimals;
  return Math.round(n * f) / f;
}
