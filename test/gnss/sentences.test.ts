import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as nmeaSimple from 'nmea-simple';
import { decodeFrame } from '../../src/gnss/sentences/decode.js';
import { ddmmyy, latitude, num, timeOfDay } from '../../src/gnss/sentences/fields.js';
import { frameSentence, type Frame } from '../../src/gnss/sentences/frame.js';
import type { Sentence } from '../../src/gnss/sentences/types.js';
import { HAVE_CORPUS, corpusLogs, corpusPath } from './helpers/corpus.js';
import { sentence as withChecksum } from '../../src/sim/receiver/nmea-format.js';

function decode(line: string): Sentence {
  const frame = frameSentence(line);
  if (typeof frame === 'string') throw new Error(`frame rejected: ${frame}`);
  const s = decodeFrame(frame);
  if (typeof s === 'string') throw new Error(`not decoded: ${s}`);
  return s;
}

describe('frame', () => {
  const gga = 'GPGGA,113258,3238.9148,N,10822.4466,W,2,08,1.1,1577.4,M,-24.6,M,,';
  it.each([
    ['plain', withChecksum(gga)],
    ['CRLF', `${withChecksum(gga)}\r`],
    ['$$ prefix', `$${withChecksum(gga)}`],
    ['garbage before $', `\u00ff\u0001xx${withChecksum(gga)}`],
    [
      'lower-case checksum',
      withChecksum(gga).toLowerCase().replace('$gpgga', '$GPGGA').replace(/,n,/, ',N,').replace(/,w,/, ',W,').replace(/,m,/g, ',M,'),
    ],
  ])('accepts %s', (_, line) => {
    const f = frameSentence(line) as Frame;
    expect(typeof f).toBe('object');
    expect(f.talker).toBe('GP');
    expect(f.type).toBe('GGA');
    expect(f.checksum).toBe(true);
  });

  it('accepts a sentence without a checksum and says so', () => {
    const f = frameSentence(`$${gga}`) as Frame;
    expect(f.checksum).toBe(false);
    expect(f.fields[1]).toBe('113258');
  });

  it.each([
    ['bad checksum', withChecksum(gga).replace(/..$/, '00'), 'badChecksum'],
    ['truncated checksum', `${withChecksum(gga).slice(0, -1)}`, 'badChecksum'],
    ['binary inside', withChecksum(gga).replace('3238', '32\u00008'), 'badCharacter'],
    ['no $', gga, 'noStart'],
    ['comment', '# Name: Garmin 15x', 'comment'],
    ['empty', '\r', 'empty'],
    ['bad tag', withChecksum('G,1,2'), 'badTag'],
  ])('rejects %s', (_, line, reason) => {
    expect(frameSentence(line)).toBe(reason);
  });

  it('treats $P... as proprietary, except Quectel PQGSV/PQGSA (BeiDou)', () => {
    expect((frameSentence(withChecksum('PGRME,7.6,M,41.7,M,42.4,M')) as Frame).talker).toBe('P');
    const pq = frameSentence(withChecksum('PQGSV,1,1,01,201,45,090,40')) as Frame;
    expect([pq.talker, pq.type]).toEqual(['PQ', 'GSV']);
    expect(decodeFrame(frameSentence(withChecksum('PGRME,7.6,M,41.7,M,42.4,M')) as Frame)).toBe('proprietary');
    expect(decodeFrame(frameSentence(withChecksum('GPHDT,274.12,T')) as Frame)).toBe('unknown');
  });
});

describe('fields: empty is undefined, never 0', () => {
  it('numbers', () => {
    expect(num('')).toBeUndefined();
    expect(num('-0.0')).toBe(-0);
    expect(num('abc')).toBeUndefined();
  });
  it('coordinates need a valid hemisphere and minutes below 60', () => {
    expect(latitude('4807.038', 'N')).toBeCloseTo(48.1173, 6);
    expect(latitude('4807.038', 'S')).toBeCloseTo(-48.1173, 6);
    expect(latitude('4807.038', '')).toBeUndefined();
    expect(latitude('4867.0', 'N')).toBeUndefined();
    expect(latitude('9107.0', 'N')).toBeUndefined();
  });
  it('time keeps milliseconds; dates follow gpsd century rules', () => {
    expect(timeOfDay('225446.33')).toBe(((22 * 60 + 54) * 60 + 46) * 1000 + 330);
    expect(timeOfDay('2254')).toBeUndefined();
    expect(timeOfDay('256000')).toBeUndefined();
    expect(ddmmyy('191194')).toBe(Date.UTC(1994, 10, 19));
    expect(ddmmyy('010126')).toBe(Date.UTC(2026, 0, 1));
    expect(ddmmyy('310226')).toBeUndefined();
  });
});

describe('decoders fix the nmea-simple defects', () => {
  it('RMC keeps milliseconds and empty speed/course stay unknown', () => {
    const line = withChecksum('GNRMC,074155.799,A,3114.8770,N,12135.2463,E,,,250215,,,A');
    const s = decode(line);
    expect(s).toMatchObject({
      kind: 'RMC',
      timeOfDay: (7 * 3600 + 41 * 60 + 55) * 1000 + 799,
      speedKnots: undefined,
      track: undefined,
      date: Date.UTC(2015, 1, 25),
    });
    // The defect this replaces: nmea-simple loses the .799 and reads the empty speed as 0.
    const p = nmeaSimple.parseNmeaSentence(line) as unknown as { datetime: Date; speedKnots: number };
    expect(p.datetime.getUTCMilliseconds()).toBe(0);
    expect(p.speedKnots).toBe(0);
  });

  it('GGA with an empty altitude has no altitude (not sea level)', () => {
    expect(decode(withChecksum('GPGGA,123519,4807.038,N,01131.324,E,1,08,0.9,,M,,M,,'))).toMatchObject({
      kind: 'GGA',
      altMSL: undefined,
      satellitesUsed: 8,
      hdop: 0.9,
    });
  });

  it('GSA NMEA 4.10 system id is an id, not a DOP; 99.99 DOPs are unknown', () => {
    expect(decode(withChecksum('GNGSA,A,3,82,66,81,,,,,,,,,,1.05,0.64,0.83,2'))).toMatchObject({
      kind: 'GSA',
      fixType: 3,
      ids: [82, 66, 81],
      pdop: 1.05,
      hdop: 0.64,
      vdop: 0.83,
      systemId: 2,
    });
    expect(decode(withChecksum('GPGSA,A,1,,,,,,,,,,,,,99.99,99.99,99.99'))).toMatchObject({
      pdop: undefined,
      hdop: undefined,
      vdop: undefined,
      fixType: 1,
    });
    // The NAVIOR-24 sends 24 id fields: DOPs come from the end.
    expect(decode(withChecksum('GPGSA,A,3,27,23,13,07,25,,,,,,,,,,,,,,,,,,,,07.9,06.0,05.2'))).toMatchObject({
      ids: [27, 23, 13, 7, 25],
      pdop: 7.9,
      hdop: 6,
      vdop: 5.2,
    });
  });

  it('GSV NMEA 4.10 signal id is not a satellite', () => {
    const s = decode(withChecksum('GAGSV,3,1,09,02,00,179,,04,09,321,,07,11,134,11,11,10,227,,7'));
    expect(s).toMatchObject({ kind: 'GSV', total: 3, part: 1, inView: 9, signalId: 7 });
    expect(s.kind === 'GSV' && s.satellites.map((x) => x.id)).toEqual([2, 4, 7, 11]);
    expect(s.kind === 'GSV' && s.satellites[0]).toEqual({ id: 2, elevation: 0, azimuth: 179, snr: undefined });
  });

  it('a short DTM or any unknown sentence is counted, not thrown', () => {
    expect(() => nmeaSimple.parseNmeaSentence(withChecksum('GPDTM,W84'))).toThrow();
    expect(decodeFrame(frameSentence(withChecksum('GPDTM,W84')) as Frame)).toBe('unknown');
  });

  it('short known sentences are malformed, not decoded', () => {
    expect(decodeFrame(frameSentence(withChecksum('GPGGA,123519')) as Frame)).toBe('malformed');
    expect(decodeFrame(frameSentence(withChecksum('GPGSA,A,1,,,')) as Frame)).toBe('malformed');
  });
});

describe.skipIf(!HAVE_CORPUS)('agreement with nmea-simple where it is right (whole corpus)', () => {
  it('GGA positions and altitudes, RMC positions and dates', () => {
    let compared = 0;
    for (const log of corpusLogs()) {
      for (const raw of readFileSync(corpusPath(log), 'latin1').split('\n')) {
        const line = raw.trim();
        const frame = frameSentence(line);
        if (typeof frame === 'string' || !frame.checksum || line.startsWith('$$')) continue;
        const mine = decodeFrame(frame);
        if (typeof mine === 'string' || (mine.kind !== 'GGA' && mine.kind !== 'RMC')) continue;
        if (mine.lat === undefined || mine.lon === undefined) continue;
        let theirs: { latitude: number; longitude: number; altitudeMeters?: number; datetime?: Date };
        try {
          theirs = nmeaSimple.parseNmeaSentence(line.slice(line.lastIndexOf('$'))) as never;
        } catch {
          continue;
        }
        expect(mine.lat, line).toBeCloseTo(theirs.latitude, 9);
        expect(mine.lon, line).toBeCloseTo(theirs.longitude, 9);
        if (mine.kind === 'GGA' && mine.altMSL !== undefined) expect(mine.altMSL, line).toBeCloseTo(theirs.altitudeMeters ?? NaN, 6);
        if (mine.kind === 'RMC' && mine.date !== undefined && theirs.datetime !== undefined) {
          expect(new Date(mine.date).getUTCDate(), line).toBe(theirs.datetime.getUTCDate());
        }
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(2000);
  });
});
