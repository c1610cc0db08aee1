/**
 * The receiver's health from NMEA: the real decoder fed the synthetic receiver's sentences (with
 * its antenna states and impairments) or hand-written TXT notices, into ReceiverHealth.
 */
import { describe, expect, it } from 'vitest';
import { createDecoder } from '../../src/gnss/decoder.js';
import { antennaFromGpsd, antennaFromText } from '../../src/gnss/health/antenna.js';
import { ReceiverHealth, type ReceiverHealthState } from '../../src/gnss/health/receiver-health.js';
import { driveText, generateDrive, type DriveOptions } from '../../src/sim/receiver/index.js';
import { sentence } from '../../src/sim/receiver/nmea-format.js';
import { captureLogger } from '../helpers/capture-logger.js';
import type { StatusSnapshot } from '../../src/status/snapshot.js';

/** The drive through the real decoder into a ReceiverHealth; `at` is called with the state after each epoch. */
function run(options: DriveOptions, at?: (t: number, s: ReceiverHealthState) => void): { health: ReceiverHealth; log: () => string } {
  const { logger, text } = captureLogger();
  const health = new ReceiverHealth(logger);
  const drive = generateDrive(options);
  const decoder = createDecoder({
    sky: true,
    onText: (t) => health.text(t),
    onFix: (fix) => {
      health.epoch(fix.time, decoder.satellites());
      at?.((fix.time - drive.startTimeMs) / 1000, health.state());
    },
  });
  for (const line of drive.lines) decoder.push(line);
  decoder.flush();
  return { health, log: text };
}

function logLines(log: string, pattern: RegExp): string[] {
  return log
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => (JSON.parse(l) as { msg: string }).msg)
    .filter((m) => pattern.test(m));
}

describe('antenna state from TXT notices', () => {
  it("reads u-blox's words and other receivers', and ignores other notices", () => {
    expect(antennaFromText('ANTSTATUS=OK')).toBe('OK');
    expect(antennaFromText('ANTSTATUS=OPEN')).toBe('OPEN');
    expect(antennaFromText('ANTSTATUS=SHORT')).toBe('SHORT');
    expect(antennaFromText('ANTSTATUS=INIT')).toBe('INIT');
    expect(antennaFromText('ANTSTATUS=DONTKNOW')).toBe('unknown');
    expect(antennaFromText('ANTENNA OPEN')).toBe('OPEN');
    expect(antennaFromText('ANTENNA OK')).toBe('OK');
    expect(antennaFromText('Antenna status: short')).toBe('SHORT');
    expect(antennaFromText('ANTSUPERV=AC SD PDoS SR')).toBeUndefined();
    expect(antennaFromText('PROTVER=32.01')).toBeUndefined();
  });

  it("gpsd's codes follow gps.h, not gpsd_json(5): 2 is open, 3 is short", () => {
    expect([0, 1, 2, 3, 4].map(antennaFromGpsd)).toEqual(['unknown', 'OK', 'OPEN', 'SHORT', 'unknown']);
  });

  it('follows each state through the decoder, one log line per change, none per repeated notice', () => {
    const { logger, text } = captureLogger();
    const health = new ReceiverHealth(logger);
    const decoder = createDecoder({ onText: (t) => health.text(t) });
    const states: string[] = [];
    for (const word of ['INIT', 'OK', 'OK', 'OPEN', 'OPEN', 'OPEN', 'OK', 'SHORT', 'SHORT']) {
      decoder.push(sentence(`GNTXT,01,01,02,ANTSTATUS=${word}`));
      states.push(health.state().antenna);
    }
    decoder.push(sentence('GPTXT,01,01,01,ANTENNA OPEN'));
    states.push(health.state().antenna);
    expect(states).toEqual(['INIT', 'OK', 'OK', 'OPEN', 'OPEN', 'OPEN', 'OK', 'SHORT', 'SHORT', 'OPEN']);
    expect(health.state().antennaFrom).toBe('nmea');
    expect(logLines(text(), /antenna/)).toEqual([
      'GNSS antenna init',
      'GNSS antenna OK',
      'GNSS antenna open: no antenna current: check the antenna cable and its connector at the receiver',
      'GNSS antenna OK',
      'GNSS antenna short: the antenna or its cable is shorted: replace the antenna (and the cable if it is pinched)',
      'GNSS antenna open: no antenna current: check the antenna cable and its connector at the receiver',
    ]);
    // TXT stays counted as a sentence the fix does not use.
    expect(decoder.counters.sentences.unknown).toBe(10);
  });

  it('from the synthetic receiver: open, then OK again, with the sky gone while open', () => {
    const seen: { t: number; antenna: string; strong: number }[] = [];
    run(
      {
        minutes: 3,
        seed: 3,
        antenna: [
          { atS: 60, state: 'OPEN' },
          { atS: 120, state: 'OK' },
        ],
      },
      (t, s) => seen.push({ t, antenna: s.antenna, strong: s.signal.strong }),
    );
    expect(seen.find((x) => x.t === 30)).toMatchObject({ antenna: 'OK' });
    expect(seen.find((x) => x.t === 61)).toMatchObject({ antenna: 'OPEN', strong: 0 });
    expect(seen.find((x) => x.t === 150)?.antenna).toBe('OK');
    expect(seen.find((x) => x.t === 150)?.strong).toBeGreaterThan(10);
  });
});

describe('gpsd reports', () => {
  it("ant, antPwr and jam: a fault and its end, and the receiver's jamming indicator", () => {
    const { logger, text } = captureLogger();
    const health = new ReceiverHealth(logger);
    health.gpsd({ antPwr: 2, jam: 5 });
    expect(health.state()).toMatchObject({ antenna: 'unknown', antennaPower: 'on', jamming: { state: 'none', indicator: 5 } });
    health.gpsd({ ant: 2, antPwr: 2, jam: 5 });
    expect(health.state().antenna).toBe('OPEN');
    health.gpsd({ ant: 3, antPwr: 1 });
    expect(health.state()).toMatchObject({ antenna: 'SHORT', antennaPower: 'off', antennaFrom: 'gpsd' });
    // gpsd writes `ant` only above ANT_OK: without it the fault is gone.
    health.gpsd({ antPwr: 2, jam: 150 });
    expect(health.state()).toMatchObject({ antenna: 'OK', jamming: { state: 'suspected', indicator: 150 } });
    health.gpsd({ antPwr: 2, jam: 150 });
    health.gpsd({ antPwr: 2, jam: 20 });
    expect(health.state().jamming.state).toBe('none');
    expect(logLines(text(), /jamming/)).toEqual([
      "GNSS jamming suspected: the receiver's jamming indicator is 150/255",
      'GNSS jamming no longer suspected: C/N0 is back',
    ]);
  });
});

describe('signal strength', () => {
  it('the top four used satellites and the strong ones, steady on a clear drive, falling into a car park', () => {
    const seen: { t: number; top?: number; strong: number; trend: string }[] = [];
    run({ minutes: 4, seed: 5, impairments: [{ kind: 'car park', fromS: 180, toS: 400 }] }, (t, s) =>
      seen.push({
        t,
        strong: s.signal.strong,
        trend: s.signal.trend,
        ...(s.signal.topMeanDbHz !== undefined ? { top: s.signal.topMeanDbHz } : {}),
      }),
    );
    const before = seen.find((x) => x.t === 170);
    expect(before?.trend).toBe('steady');
    expect(before?.top).toBeGreaterThan(40);
    expect(before?.top).toBeLessThan(52);
    expect(before?.strong).toBeGreaterThan(10);
    // Down the ramp the top four fall against the minute before; inside nothing is tracked.
    expect(seen.filter((x) => x.t > 180 && x.t <= 195).map((x) => x.trend)).toContain('falling');
    expect(seen.find((x) => x.t === 200)).toMatchObject({ strong: 0, trend: 'unknown' });
  });
});

describe('jamming suspected from C/N0', () => {
  it('a jammer switched on: suspected within seconds, said once, cleared once it is off', () => {
    let detectedAt: number | undefined;
    let clearedAt: number | undefined;
    const { log } = run({ minutes: 5, seed: 11, impairments: [{ kind: 'interference', fromS: 120, toS: 200, db: 15 }] }, (t, s) => {
      if (s.jamming.state === 'suspected' && detectedAt === undefined) detectedAt = t;
      if (detectedAt !== undefined && s.jamming.state === 'none' && clearedAt === undefined) clearedAt = t;
    });
    expect(detectedAt).toBeGreaterThanOrEqual(120);
    expect(detectedAt).toBeLessThanOrEqual(125);
    expect(clearedAt).toBeGreaterThan(200);
    expect(clearedAt).toBeLessThan(230);
    expect(logLines(log(), /jamming/)).toHaveLength(2);
  });

  it('tunnel, street canyon, car park and a slow fade are not jamming', () => {
    const impairments: DriveOptions['impairments'] = [
      { kind: 'tunnel', fromS: 60, toS: 120 },
      { kind: 'canyon', fromS: 160, toS: 260, streetHeading: 90 },
      { kind: 'car park', fromS: 300, toS: 500 },
      { kind: 'fade', fromS: 560, toS: 620 },
    ];
    for (const seed of [1, 2, 3]) {
      const suspected: number[] = [];
      run({ minutes: 12, seed, impairments }, (t, s) => {
        if (s.jamming.state === 'suspected') suspected.push(t);
      });
      expect(suspected, `seed ${seed}`).toEqual([]);
    }
  });

  it('an open antenna is not jamming', () => {
    let suspected = 0;
    run({ minutes: 3, seed: 4, antenna: [{ atS: 60, state: 'OPEN' }] }, (_t, s) => {
      if (s.jamming.state === 'suspected') suspected++;
    });
    expect(suspected).toBe(0);
  });
});

describe('where it shows', () => {
  it('status line and DEGRADED for an open antenna or suspected jamming, with the fix for each', async () => {
    const { receiverHealthLine } = await import('../../src/terminal/status-screen.js');
    const { assessHealth } = await import('../../src/status/health.js');
    const health = new ReceiverHealth();
    health.text('ANTSTATUS=OK');
    const drive = generateDrive({ minutes: 1, seed: 2 });
    const decoder = createDecoder({ sky: true, onFix: (fix) => health.epoch(fix.time, decoder.satellites()) });
    for (const line of drive.lines) decoder.push(line);
    expect(receiverHealthLine(health.state())).toMatch(/^antenna OK {2}C\/N0 4\d dB-Hz \(top 4\) {2}\d+ above 30 {2}jamming none$/);
    const snapshot = (h: ReceiverHealthState): StatusSnapshot => ({
      schema: 1,
      takenAt: 0,
      source: 'daemon',
      daemon: { running: true, version: 'x' },
      receiver: { port: '/dev/x', link: 'open', lastSentenceAgeS: 0, mode: 3, constellations: [], health: h },
      registration: { deviceUUID: 'u' },
      outbox: { pending: 0, sentToday: 0, thinned: 0, deadLetters: 0 },
      upload: {},
      disk: { dataDir: '/tmp' },
    });
    expect(assessHealth(snapshot(health.state())).level).toBe('healthy');
    health.text('ANTSTATUS=OPEN');
    expect(assessHealth(snapshot(health.state())).reasons).toEqual([
      'GNSS antenna open: no antenna current: check the antenna cable and its connector at the receiver',
    ]);
    health.text('ANTSTATUS=OK');
    health.gpsd({ jam: 200 });
    expect(assessHealth(snapshot(health.state()))).toMatchObject({
      level: 'degraded',
      reasons: [expect.stringMatching(/jamming suspected .*device in the cab/)],
    });
  });
});

describe('doctor', () => {
  it('names the antenna fault and its fix from the notices in its sample; says nothing without one', async () => {
    const { checkReceiver } = await import('../../src/doctor/gnss-checks.js');
    const sample = (antenna: DriveOptions['antenna']) =>
      Buffer.from(driveText(generateDrive({ minutes: 0.2, seed: 1, ...(antenna ? { antenna } : {}) })));
    const check = async (bytes: Buffer) =>
      (
        await checkReceiver({ read: async () => bytes, configuredBaud: 9600, listenMs: 5000, clock: { wallMs: () => 0 }, replay: true })
      ).find((c) => c.name === 'antenna');
    expect(await check(sample([{ atS: 0, state: 'SHORT' }]))).toMatchObject({
      verdict: 'FAIL',
      fix: expect.stringMatching(/replace the antenna/),
    });
    expect(await check(sample([{ atS: 0, state: 'OPEN' }]))).toMatchObject({
      verdict: 'FAIL',
      fix: expect.stringMatching(/cable and its connector/),
    });
    expect(await check(sample([]))).toMatchObject({ verdict: 'PASS' });
    expect(await check(sample(undefined))).toBeUndefined();
  });
});
