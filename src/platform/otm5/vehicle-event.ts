import type { RegisteredDevice } from '../contracts.js';
import type { QueuedFix, VehicleEventKind } from '../../fix/fix.js';
import { toLocationUpdateEvent, type EventVehicleOptions, type LocationUpdateEvent, type Measure } from './event.js';

/**
 * A movement or engine event as OTM5 writes it (components/schemas/startMovingEvent,
 * stopMovingEvent, startEngineEvent, stopEngineEvent: "provided by Fleet Management Systems"):
 * the same envelope as a location update (id, GNSS creationDate, lifecycle "actual", the vehicle
 * inline or the device identity), a latLonPointGeoReference where it happened, and the odometer
 * in externalAttributes, which takes objects ({value, unit} as every OTM5 measure).
 */
export interface VehicleOtmEvent {
  eventType: VehicleEventKind;
  id: string;
  creationDate: string;
  lifecycle: 'actual';
  geoReference: { type: 'latLonPointGeoReference'; lat: number; lon: number };
  vehicle?: { associationType: 'inline'; entity: { licensePlate: string } };
  externalAttributes: Record<string, unknown> & { odometer?: Measure; engineHours?: Measure };
}

export function toVehicleEvent(
  entry: QueuedFix & { eventType: VehicleEventKind },
  device: RegisteredDevice,
  options: EventVehicleOptions = {},
): VehicleOtmEvent {
  // The location update's envelope, without what a vehicle event does not carry (speed, heading).
  const base = toLocationUpdateEvent(entry, device, { ...options, detail: 'position' });
  const event: VehicleOtmEvent = {
    eventType: entry.eventType,
    id: base.id,
    creationDate: base.creationDate,
    lifecycle: 'actual',
    geoReference: { type: 'latLonPointGeoReference', lat: base.geoReference.lat, lon: base.geoReference.lon },
    externalAttributes: { ...(base.externalAttributes ?? {}) },
  };
  if (base.vehicle) event.vehicle = base.vehicle;
  if (entry.odometerM !== undefined) event.externalAttributes.odometer = { value: entry.odometerM, unit: 'm' };
  // Fleets service by engine hours: hours to a tenth, as the vehicle's hour meter shows them.
  if (entry.engineS !== undefined) event.externalAttributes.engineHours = { value: Math.round(entry.engineS / 360) / 10, unit: 'h' };
  return event;
}

/** The OTM5 event a queued entry stands for: a vehicle event by its eventType, else a location update. */
export function toOtmEvent(
  entry: QueuedFix,
  device: RegisteredDevice,
  options: EventVehicleOptions = {},
): LocationUpdateEvent | VehicleOtmEvent {
  const eventType = entry.eventType;
  return eventType === undefined ? toLocationUpdateEvent(entry, device, options) : toVehicleEvent({ ...entry, eventType }, device, options);
}
