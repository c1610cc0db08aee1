import { describe, expect, it } from 'vitest';
import { createDecoder } from '../../src/gnss/decoder.js';
import type { Fix } from '../../src/fix/fix.js';
import { sentence as cs } from '../../src/sim/receiver/nmea-format.js';

function run(lines: string[], options = {}): { fixes: Fix[]; decoder: ReturnType<typeof createDecoder> } {
  const decoder = createDecoder(options);
  const fixes: Fix[] = [];
  for (const l of lines) fixes.push(...decoder.push(l));
  fixes.push(...decoder.flush());
  return { fixes, decoder };
}

const rmc = (t: string, date = '221126', lat = '4807.038', sp = '010.0', tr = '084.4') =>
  cs(`GPRMC,${t},A,${lat},N,01131.000,E,${sp},${tr},${date},003.1,W,A`);
const gga = (t: string, lat = '4807.038', alt = '545.4', q = '1', n = '08') =>
  cs(`GPGGA,${t},${lat},N,01131.000,E,${q},${n},0.9,${alt},M,46.9,M,,`);
const gsa = (mode = '3') => cs(`GPGSA,A,${mode},04,05,09,12,24,,,,,,,,2.5,1.3,2.1`);

describe('epochs', () => {
  it('merges the sentences of one time, emits when the time moves on, in order', () => {
    const { fixes } = run([rmc('100000.00'), gga('100000.00'), gsa(), rmc('100001.00'), gga('100001.00'), gsa(), rmc('100002.00')]);
    expect(fixes.map((f) => new Date(f.time).toISOString())).toEqual(['2026-11-22T10:00:00.000Z', '2026-11-22T10:00:01.000Z']);
    expect(fixes[0]).toMatchObject({ mode: 3, altMSL: 545.4, satellitesUsed: 5, hdop: 1.3, pdop: 2.5, vdop: 2.1, quality: 1, track: 84.4 });
    expect(fixes[0]?.speed).toBeCloseTo((10 * 1852) / 3600, 9);
  });

  it('keeps 10 Hz epochs apart (milliseconds)', () => {
    const { fixes } = run([
      rmc('100000.10'),
      gga('100000.10'),
      rmc('100000.20'),
      gga('100000.20'),
      rmc('100000.30'),
      gga('100000.30'),
      rmc('100000.40'),
    ]);
    expect(fixes.map((f) => f.time % 1000)).toEqual([100, 200, 300]);
  });

  it('counts epochs before the first date instead of emitting them, then carries the date', () => {
    const { fixes, decoder } = run([
      gga('235958.00'),
      gga('235959.00'),
      rmc('235959.00', '221126'),
      gga('000000.00'),
      gga('000001.00'),
      gga('000002.00'),
    ]);
    expect(decoder.counters.epochs.undated).toBe(1);
    // Carried forward across midnight: the next day.
    expect(fixes.map((f) => new Date(f.time).toISOString())).toEqual([
      '2026-11-22T23:59:59.000Z',
      '2026-11-23T00:00:00.000Z',
      '2026-11-23T00:00:01.000Z',
      '2026-11-23T00:00:02.000Z',
    ]);
  });

  it('derives speed and course from positions when the receiver gives none (GGA-only)', () => {
    const { fixes } = run([
      rmc('100000.00', '221126', '4807.000', '', ''),
      gga('100001.00', '4807.010'),
      gga('100002.00', '4807.020'),
      gga('100003.00', '4807.030'),
    ]);
    const f = fixes[1];
    // 0.01 minute of latitude is about 18.5 m, northwards.
    expect(f?.speed).toBeGreaterThan(18);
    expect(f?.speed).toBeLessThan(19);
    expect(f?.track).toBeCloseTo(0, 3);
  });

  it('no fix: GGA quality 0, RMC V, or fewer than 3 satellites give mode 1 and no position', () => {
    const { fixes } = run([
      rmc('100000.00'),
      gga('100000.00', '4807.038', '545.4', '0'),
      rmc('100001.00'),
      gga('100001.00', '4807.038', '545.4', '1', '02'),
      cs('GPRMC,100002.00,V,,,,,,,221126,,,N'),
      rmc('100003.00'),
      gga('100003.00'),
      rmc('100004.00'),
    ]);
    expect(fixes.map((f) => f.mode)).toEqual([1, 1, 1, 3]);
    expect(fixes[0]?.lat).toBeUndefined();
  });

  it('the last position of the epoch wins (GNS after GGA, another talker)', () => {
    const gns = cs('GNGNS,100000.00,4807.500,N,01131.000,E,AA,12,0.8,550.0,46.9,,,S');
    const { fixes } = run([rmc('100000.00'), gga('100000.00'), gns, rmc('100001.00'), gga('100001.00'), rmc('100002.00')]);
    expect(fixes[0]?.lat).toBeCloseTo(48.125, 9);
    expect(fixes[0]?.altMSL).toBe(550);
  });

  it('emits an epoch as soon as its learned cycle end arrives (latency under one epoch)', () => {
    const decoder = createDecoder();
    const cycle = (t: string): Fix[] => [rmc(t), gga(t), gsa()].flatMap((l) => decoder.push(l));
    expect(cycle('100000.00')).toEqual([]);
    expect(cycle('100001.00').map((f) => f.time % 60_000)).toEqual([0]);
    // The GSA ended the last two cycles: from the third on, it ends its cycle at once.
    expect(cycle('100002.00').map((f) => f.time % 60_000)).toEqual([1000, 2000]);
    expect(cycle('100003.00').map((f) => f.time % 60_000)).toEqual([3000]);
    expect(decoder.counters.epochs.late).toBe(0);
  });

  it('ZDA lends its date (to the epoch it arrives in), with the midnight case', () => {
    const { fixes } = run([
      gga('235959.00'),
      cs('GPZDA,000000.00,23,11,2026,00,00'),
      gga('000000.00'),
      cs('GPZDA,000001.00,23,11,2026,00,00'),
      gga('000001.00'),
    ]);
    expect(fixes.map((f) => new Date(f.time).toISOString())).toEqual([
      '2026-11-22T23:59:59.000Z',
      '2026-11-23T00:00:00.000Z',
      '2026-11-23T00:00:01.000Z',
    ]);
  });

  it('drops a last epoch that is not known to be complete', () => {
    const { fixes, decoder } = run([rmc('100000.00'), gga('100000.00'), rmc('100001.00'), gga('100001.00'), rmc('100002.00')]);
    expect(fixes).toHaveLength(2);
    expect(decoder.counters.epochs.truncated).toBe(1);
  });

  // `sky`: the daemon's way, the marks kept for satellites() without a view on every fix.
  it.each([{ satellites: true }, { sky: true }])(
    'marks satellites in view as used from GSA, per constellation and signal (NMEA 4.10): %o',
    (options) => {
      const { decoder, fixes } = run(
        [
          rmc('100000.00'),
          gga('100000.00'),
          cs('GNGSA,A,3,05,12,,,,,,,,,,,1.2,0.7,1.0,1'),
          cs('GNGSA,A,3,66,,,,,,,,,,,,1.2,0.7,1.0,2'),
          cs('GPGSV,1,1,02,05,40,083,46,12,17,308,41,1'),
          cs('GLGSV,1,1,02,66,20,100,30,67,10,200,,1'),
          rmc('100001.00'),
          gga('100001.00'),
          cs('GNGSA,A,3,05,12,,,,,,,,,,,1.2,0.7,1.0,1'),
          cs('GNGSA,A,3,66,,,,,,,,,,,,1.2,0.7,1.0,2'),
          rmc('100002.00'),
        ],
        options,
      );
      expect(fixes.every((f) => (f.satellites !== undefined) === (options.satellites === true))).toBe(true);
      const sats = decoder.satellites();
      expect(sats).toEqual([
        { constellation: 'GPS', id: 5, elevation: 40, azimuth: 83, snr: 46, used: true, signalId: 1 },
        { constellation: 'GPS', id: 12, elevation: 17, azimuth: 308, snr: 41, used: true, signalId: 1 },
        { constellation: 'GLONASS', id: 66, elevation: 20, azimuth: 100, snr: 30, used: true, signalId: 1 },
        { constellation: 'GLONASS', id: 67, elevation: 10, azimuth: 200, used: false, signalId: 1 },
      ]);
    },
  );

  it.each([{ satellites: true }, { sky: true }])(
    'a read of the satellites between a GSV group and the end of its epoch keeps the used marks: %o',
    (options) => {
      const decoder = createDecoder(options);
      const gsv = cs('GPGSV,1,1,02,05,40,083,46,12,17,308,41,1');
      for (const l of [rmc('100000.00'), gga('100000.00'), gsa(), gsv, rmc('100001.00'), gga('100001.00'), gsa()]) decoder.push(l);
      const used = (): number[] =>
        decoder
          .satellites()
          .filter((s) => s.used)
          .map((s) => s.id);
      expect(used()).toEqual([5, 12]);
      // The next second's sky arrives; the epoch is still open (no end seen yet) when status asks.
      decoder.push(gsv);
      expect(used()).toEqual([5, 12]);
    },
  );
});
