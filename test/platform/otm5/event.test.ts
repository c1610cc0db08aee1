import { describe, expect, it } from 'vitest';
import { EVENT_REQUEST_HEADERS, toLocationUpdateEvent } from '../../../src/platform/otm5/event.js';
import type { QueuedFix } from '../../../src/fix/fix.js';
import { loadOtmSchemas } from '../../helpers/otm-schema.js';

const device = {
  externalSystemId: 'acme-tms',
  externalDeviceId: 'pi-0001',
  source: 'config',
  deviceUUID: '3f1c2b9e-8a7d-4c1e-9b2a-5d6e7f801234',
};
const full: QueuedFix = {
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
  it('"position" (the default): id, GNSS time in ms, position, speed, heading and the plate; nothing else', () => {
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
        heading: { value: 271.5, unit: 'degrees' },
      },
      vehicle: { associationType: 'inline', entity: { licensePlate: 'AA-11-BB' } },
    });
    expect(toLocationUpdateEvent(full, device, { licensePlate: 'AA-11-BB', detail: 'position' })).toEqual(e);
  });

  it('"position" without a plate: the device identity places the position', () => {
    const e = toLocationUpdateEvent(full, device);
    expect(e.vehicle).toBeUndefined();
    expect(e.externalAttributes).toEqual({ externalSystemId: 'acme-tms', externalDeviceId: 'pi-0001' });
  });

  it('"full": both identities, deviceUUID and the receiver facts (units: m, dimensionless, count)', () => {
    const e = toLocationUpdateEvent(full, device, { licensePlate: 'AA-11-BB', detail: 'full' });
    expect(e.vehicle).toEqual({ associationType: 'inline', entity: { licensePlate: 'AA-11-BB' } });
    expect(e.geoReference).toEqual(toLocationUpdateEvent(full, device).geoReference);
    expect(e.externalAttributes).toEqual({
      externalSystemId: 'acme-tms',
      externalDeviceId: 'pi-0001',
      deviceUUID: device.deviceUUID,
      altitude: { value: 12.35, unit: 'm' },
      hdop: { value: 0.9, unit: 'dimensionless' },
      satellitesUsed: { value: 11, unit: 'count' },
    });
  });

  it('rounds coordinates to 7 decimals and speed and heading to 0.1 (a heading of 359.96 is 0)', () => {
    const e = toLocationUpdateEvent({ ...full, lat: 52.19388794999, lon: -5.40664684, speed: 1.23456, track: 359.96 }, device);
    expect(e.geoReference).toMatchObject({ lat: 52.1938879, lon: -5.4066468, speed: { value: 4.4 }, heading: { value: 0 } });
    const body = JSON.stringify(e);
    expect(body).toContain('"lat":52.1938879,"lon":-5.4066468');
    expect(body).not.toMatch(/\d\.\d{8,}/);
  });

  it('is the same bytes for the same stored fix: a re-send after a crash is the same event under the same id', () => {
    for (const detail of ['position', 'full'] as const) {
      const a = JSON.stringify(toLocationUpdateEvent({ ...full }, { ...device }, { licensePlate: 'AA-11-BB', detail }));
      const b = JSON.stringify(toLocationUpdateEvent({ ...full }, { ...device }, { licensePlate: 'AA-11-BB', detail }));
      expect(a).toBe(b);
    }
  });

  it('"position" is a little over half the bytes of "full"', () => {
    const position = Buffer.byteLength(JSON.stringify(toLocationUpdateEvent(full, device, { licensePlate: 'AA-11-BB' })));
    const fullBytes = Buffer.byteLength(JSON.stringify(toLocationUpdateEvent(full, device, { licensePlate: 'AA-11-BB', detail: 'full' })));
    expect(position).toBeLessThan(400);
    expect(position).toBeLessThan(fullBytes * 0.65);
  });

  it('leaves out what the receiver did not report (never a speed or heading of 0)', () => {
    const e = toLocationUpdateEvent({ eventId: 'id-1', time: 0, lat: -33.5, lon: -70.25 }, device, { detail: 'full' });
    expect(e.geoReference).toEqual({ type: 'latLonPointGeoReference', lat: -33.5, lon: -70.25 });
    expect(e.vehicle).toBeUndefined();
    expect(Object.keys(e.externalAttributes ?? {}).sort()).toEqual(['deviceUUID', 'externalDeviceId', 'externalSystemId']);
    // Whole seconds go without the fraction (RFC 3339 allows it; the schema test validates it).
    expect(e.creationDate).toBe('1970-01-01T00:00:00Z');
  });

  it('keeps a reported speed and heading of 0', () => {
    const e = toLocationUpdateEvent({ ...full, speed: 0, track: 0 }, device);
    expect(e.geoReference.speed).toEqual({ value: 0, unit: 'km/h' });
    expect(e.geoReference.heading).toEqual({ value: 0, unit: 'degrees' });
  });

  it('asks the platform not to echo the event (Prefer: return=minimal, RFC 7240)', () => {
    expect(EVENT_REQUEST_HEADERS).toEqual({ prefer: 'return=minimal' });
  });

  describe.skipIf(!otm)('against components/schemas/locationUpdateEvent of otm-api-v5.6.yaml', () => {
    it('validates for both eventDetail values, with and without a plate and the optional parts', () => {
      for (const detail of ['position', 'full'] as const) {
        for (const licensePlate of ['AA-11-BB', undefined]) {
          const o = { detail, ...(licensePlate ? { licensePlate } : {}) };
          expect(otm!.validate('locationUpdateEvent', toLocationUpdateEvent(full, device, o))).toEqual([]);
          expect(otm!.validate('locationUpdateEvent', toLocationUpdateEvent({ eventId: 'x', time: 1, lat: 0, lon: 0 }, device, o))).toEqual(
            [],
          );
          // A whole second: creationDate without the fraction (the trimmed form most events take).
          const whole = toLocationUpdateEvent({ ...full, time: Date.UTC(2026, 10, 22, 8, 30, 15) }, device, o);
          expect(whole.creationDate).toBe('2026-11-22T08:30:15Z');
          expect(otm!.validate('locationUpdateEvent', whole)).toEqual([]);
        }
      }
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
