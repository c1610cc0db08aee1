/**
 * Epochs that carry the position twice. When one epoch's GGA, RMC, GLL and GNS disagree
 * (a gateway multiplexing two sources, a receiver updating between sentences, GPGGA and GLGGA of a
 * SiRFstarV), the agent chooses as gpsd does: gpsd clears `newdata` before each sentence and merges
 * what that sentence set into the fix it reports (libgpsd_core.c, gps_merge_fix), so
 *
 *   - the LAST sentence of the epoch that carries a valid position gives the position;
 *   - a later sentence that says "no fix" (GGA quality 0, RMC/GLL status V, GNS all N) makes the
 *     epoch a no-fix epoch (mode 1, no position reported), even after a valid one;
 *   - a sentence without a valid position (an invalid one before a valid one) never wins.
 *
 * Hand-written sentences here; on the corpus, every epoch whose sentences disagree is checked
 * against gpsd's own report in the .chk file.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createDecoder } from '../../src/gnss/decoder.js';
import type { Fix } from '../../src/fix/fix.js';
import { decodeFrame } from '../../src/gnss/sentences/decode.js';
import { frameSentence } from '../../src/gnss/sentences/frame.js';
import { sentence } from '../../src/sim/receiver/nmea-format.js';
import { HAVE_CORPUS, corpusLogs, corpusPath } from './helpers/corpus.js';
import { decodeFile } from './helpers/decode-file.js';
import { readGpsdTpvs } from './helpers/gpsd-chk.js';

const A = { lat: '4807.0380', ns: 'N', lon: '01131.0000', ew: 'E' }; // 48.117300, 11.516667
const B = { lat: '4807.1380', ns: 'N', lon: '01131.2000', ew: 'E' }; // 48.118967, 11.520000 (about 300 m away)
type P = typeof A;
const at = (p: P) => `${p.lat},${p.ns},${p.lon},${p.ew}`;

const gga = (t: string, p: P, q = 1) => sentence(`GPGGA,${t},${at(p)},${q},08,0.9,545.4,M,46.9,M,,`);
const rmc = (t: string, p: P, s = 'A') => sentence(`GPRMC,${t},${s},${at(p)},022.4,084.4,241126,003.1,W,${s === 'A' ? 'A' : 'N'}`);
const gll = (t: string, p: P, s = 'A') => sentence(`GPGLL,${at(p)},${t},${s},${s === 'A' ? 'A' : 'N'}`);
const gns = (t: string, p: P, modes = 'AA') => sentence(`GNGNS,${t},${at(p)},${modes},08,0.9,545.4,46.9,,`);

/** The fix of the epoch at 12:00:00 (dated by the one before it), closed by the next one. */
function firstFix(epoch: string[]): Fix | undefined {
  const d = createDecoder();
  const out: Fix[] = [];
  for (const l of [rmc('115959.00', A), gga('115959.00', A), ...epoch, rmc('120001.00', A), gga('120001.00', A)]) out.push(...d.push(l));
  return out.find((f) => f.time === Date.UTC(2026, 10, 24, 12));
}

const T = '120000.00';
const near = (f: Fix | undefined, lat: number, lon: number) => {
  expect(f?.lat).toBeCloseTo(lat, 6);
  expect(f?.lon).toBeCloseTo(lon, 6);
};

describe('dual position in one epoch: the last valid sentence wins, as in gpsd', () => {
  it('GGA then RMC: the RMC position', () => near(firstFix([gga(T, A), rmc(T, B)]), 48.118967, 11.52));
  it('RMC then GGA: the GGA position', () => near(firstFix([rmc(T, B), gga(T, A)]), 48.1173, 11.516667));
  it('RMC, GGA, GLL: the GLL position', () => near(firstFix([rmc(T, A), gga(T, A), gll(T, B)]), 48.118967, 11.52));
  it('GGA then GNS: the GNS position', () => near(firstFix([rmc(T, A), gga(T, A), gns(T, B)]), 48.118967, 11.52));
  it('two GGAs of different talkers (SiRFstarV GPGGA and GLGGA): the second', () => {
    const glgga = sentence(`GLGGA,${T},${at(B)},1,08,0.9,545.4,M,46.9,M,,`);
    near(firstFix([rmc(T, A), gga(T, A), glgga]), 48.118967, 11.52);
  });
  it('an invalid sentence before a valid one never gives the position', () => {
    const f = firstFix([gga(T, B, 0), rmc(T, A)]);
    expect(f?.mode).toBeGreaterThanOrEqual(2);
    near(f, 48.1173, 11.516667);
  });
  it('a later "no fix" sentence makes the epoch a no-fix epoch, with no position', () => {
    for (const epoch of [
      [gga(T, A), rmc(T, B, 'V')],
      [rmc(T, A), gga(T, A), gll(T, B, 'V')],
      [rmc(T, A), gga(T, A), gns(T, B, 'NN')],
      [rmc(T, A), gga(T, B, 0)],
    ]) {
      const f = firstFix(epoch);
      expect(f?.mode, epoch.join(' ')).toBe(1);
      expect(f?.lat).toBeUndefined();
    }
  });
});

/** Every epoch of a log whose timed sentences carry two valid positions more than 1e-6 degrees apart. */
function disagreeing(log: string): Map<number, { last: [number, number] }> {
  const out = new Map<number, { last: [number, number] }>();
  let tod: number | undefined;
  let positions: [number, number][] = [];
  const close = () => {
    const last = positions[positions.length - 1];
    if (tod !== undefined && last && positions.some((p) => Math.abs(p[0] - last[0]) > 1e-6 || Math.abs(p[1] - last[1]) > 1e-6))
      out.set(tod, { last });
    positions = [];
  };
  for (const line of readFileSync(corpusPath(log), 'latin1').split('\n')) {
    const f = frameSentence(line.replace(/\r$/, ''));
    if (typeof f === 'string') continue;
    const s = decodeFrame(f);
    if (typeof s === 'string') continue;
    if (s.kind !== 'GGA' && s.kind !== 'RMC' && s.kind !== 'GLL' && s.kind !== 'GNS') continue;
    if (s.timeOfDay !== tod) {
      close();
      tod = s.timeOfDay;
    }
    const valid =
      s.kind === 'GGA'
        ? (s.quality ?? 0) > 0
        : s.kind === 'RMC'
          ? s.status === 'A' || s.status === 'D'
          : s.kind === 'GLL'
            ? s.status === 'A'
            : /[^N]/.test(s.modes);
    if (valid && s.lat !== undefined && s.lon !== undefined) positions.push([s.lat, s.lon]);
  }
  close();
  return out;
}

describe.skipIf(!HAVE_CORPUS)('dual position on the corpus', () => {
  it('every epoch whose sentences disagree takes the last valid position, and gpsd reported the same', () => {
    let epochs = 0;
    let checkedAgainstGpsd = 0;
    for (const log of corpusLogs()) {
      const cases = disagreeing(log);
      if (cases.size === 0) continue;
      const fixes = decodeFile(corpusPath(log));
      const tpvs = readGpsdTpvs(corpusPath(`${log}.chk`));
      for (const [tod, { last }] of cases) {
        const fix = fixes.find((f) => ((f.time % 86_400_000) + 86_400_000) % 86_400_000 === tod && f.mode >= 2);
        if (!fix) continue;
        epochs++;
        expect(fix.lat, `${log} ${new Date(fix.time).toISOString()}`).toBeCloseTo(last[0], 9);
        expect(fix.lon, `${log} ${new Date(fix.time).toISOString()}`).toBeCloseTo(last[1], 9);
        const g = tpvs.get(fix.time);
        if (g?.lat !== undefined && g.mode >= 2) {
          checkedAgainstGpsd++;
          expect(Math.abs(g.lat - (fix.lat ?? NaN)), `${log} ${new Date(fix.time).toISOString()} vs gpsd`).toBeLessThanOrEqual(1e-6);
          expect(Math.abs((g.lon ?? NaN) - (fix.lon ?? NaN)), `${log} ${new Date(fix.time).toISOString()} vs gpsd`).toBeLessThanOrEqual(
            1e-6,
          );
        }
      }
    }
    console.log(
      `dual position: ${epochs} corpus epochs with disagreeing sentences, ${checkedAgainstGpsd} of them compared with gpsd's report, all equal`,
    );
    // ac12, ch-4701, ... (GGA and RMC of one epoch more than 1e-6 degrees apart).
    expect(epochs).toBeGreaterThanOrEqual(4);
    expect(checkedAgainstGpsd).toBe(epochs);
  });
});
