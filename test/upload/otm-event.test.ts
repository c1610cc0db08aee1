import { describe, expect, it } from 'vitest';
import { toLocationUpdateEvent, type EventFix } from '../../src/platform/otm-event.js';
import { loadOtmSchemas } from '../helpers/otm-schema.js';

const device = {
  externalSystemId: 'acme-tms',
  externalDeviceId: 'pi-0001',
  source: 'config',
  deviceUUID: '3f1c2b9e-8a7d-4c1e-9b2a-5d6e7f801234',
};
const full: EventFix = {
  eventId: '2ed6657d-e927-568b-95e1-2665a8aea6a2',
  time: Date.UTC(2026, 10, 22, 8, 30, 15, 100),
  lat: 52.1938879,
  lon: 5.4066468,
  altMSL: 12.345,
  speed: 13.8889,
  track: 271.456,
  hdop: 0.9,
  satellitesUsed: 11,
};
const otm = await loadOtmSchemas();

describe('locationUpdateEvent mapping', () => {
  it('maps every field of a full fix (units: km/h, degrees, metres)', () => {
    const e = toLocationUpdateEvent(full, device, { licensePlate: 'AA-11-BB' });
    expect(e).toEqual({
      eventType: 'locationUpdateEvent',
      id: full.eventId,
      creationDate: '2026-11-22T08:30:15.100Z',
      lifecycle: 'actual',
      geoReference: {
        type: 'latLonPointGeoReference',
        lat: 52.1938879,
        lon: 5.4066468,
        speed: { value: 50, unit: 'km/h' },
        heading: { value: 271.46, unit: 'degrees' },
      },
      vehicle: { associationType: 'inline', entity: { licensePlate: 'AA-11-BB' } },
      externalAttributes: {
        externalSystemId: 'acme-tms',
        externalDeviceId: 'pi-0001',
        deviceUUID: device.deviceUUID,
        altitude: { value: 12.35, unit: 'm' },
        hdop: { value: 0.9, unit: 'dimensionless' },
        satellitesUsed: { value: 11, unit: 'count' },
      },
    });
  });

  it('leaves out what the receiver did not report (never a speed or heading of 0) and the vehicle without a plate', () => {
    const e = toLocationUpdateEvent({ eventId: 'id-1', time: 0, lat: -33.5, lon: -70.25 }, device);
    expect(e.geoReference).toEqual({ type: 'latLonPointGeoReference', lat: -33.5, lon: -70.25 });
    expect(e.vehicle).toBeUndefined();
    expect(Object.keys(e.externalAttributes).sort()).toEqual(['deviceUUID', 'externalDeviceId', 'externalSystemId']);
    expect(e.creationDate).toBe('1970-01-01T00:00:00.000Z');
  });

  it('keeps a reported speed and heading of 0', () => {
    const e = toLocationUpdateEvent({ ...full, speed: 0, track: 0 }, device);
    expect(e.geoReference.speed).toEqual({ value: 0, unit: 'km/h' });
    expect(e.geoReference.heading).toEqual({ value: 0, unit: 'degrees' });
  });

  describe.skipIf(!otm)('against components/schemas/locationUpdateEvent of otm-api-v5.6.yaml', () => {
    it('validates, with and without the optional parts', () => {
      expect(otm!.validate('locationUpdateEvent', toLocationUpdateEvent(full, device, { licensePlate: 'AA-11-BB' }))).toEqual([]);
      expect(otm!.validate('locationUpdateEvent', toLocationUpdateEvent({ eventId: 'x', time: 1, lat: 0, lon: 0 }, device))).toEqual([]);
    });

    it('the validator is not vacuous: a broken event fails', () => {
      const e = toLocationUpdateEvent(full, device, { licensePlate: 'AA-11-BB' }) as unknown as Record<string, unknown>;
      expect(otm!.validate('locationUpdateEvent', { ...e, lifecycle: 'sometime' })).not.toEqual([]);
      expect(otm!.validate('locationUpdateEvent', { ...e, geoReference: { type: 'latLonPointGeoReference', lat: '52.1' } })).not.toEqual(
        [],
      );
      expect(otm!.validate('locationUpdateEvent', { ...e, vehicle: { associationType: 'inline' } })).not.toEqual([]);
    });
  });
});
