import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DemoHeader } from '../../src/demo/header.js';
import { DemoOutage } from '../../src/demo/outage.js';
import { demoFrame, DemoScreen } from '../../src/demo/screen.js';
import { DemoIgnition, depotIgnitionSteps } from '../../src/demo/ignition.js';
import { renderSummary, tripLines } from '../../src/demo/summary.js';
import { tempDir } from '../helpers/tmp.js';
import { liveSnapshot } from '../status/fixtures.js';

const ESC = '\u001b[';
const SGR = /\u001b\[[0-9;]*m/g;

function stream(isTTY: boolean): { out: NodeJS.WritableStream & { isTTY?: boolean }; text: () => string } {
  let text = '';
  const out = { isTTY, write: (s: string) => ((text += s), true) } as unknown as NodeJS.WritableStream & { isTTY?: boolean };
  return { out, text: () => text };
}

const header: DemoHeader = {
  elapsedMs: 75_000,
  progress: 0.42,
  stretch: 'highway',
  phase: 'outage',
  recorded: 1234,
  queued: 57,
  uploaded: 1177,
  refreshes: 3,
  passwordGrants: 1,
};

describe('demo screen', () => {
  it('a frame is the demo header over the status screen, 80x24 with the satellite table', () => {
    for (const color of [false, true]) {
      const frame = demoFrame(header, liveSnapshot(Date.now(), '/var/lib/telematics-agent'), {
        color,
        satellites: true,
        nowMs: Date.now(),
      });
      expect(frame.length).toBeLessThanOrEqual(24);
      for (const l of frame) expect(l.replace(SGR, '').length, l).toBeLessThanOrEqual(80);
      expect(frame[0]!.replace(SGR, '')).toBe('demo 1:15 · drive 42% highway · platform outage injected (events answered 503)');
      expect(frame[1]).toBe('recorded 1234  queued 57  uploaded 1177  token refreshes 3  password grants 1');
      const plain = frame.join('\n').replace(SGR, '');
      expect(plain).toMatch(/fix\s+3D/);
      expect(plain).toMatch(/GNSS\s+id/);
      expect(frame.join('\n').includes(ESC)).toBe(color);
    }
  });

  it('on a terminal: cursor hidden, redrawn in place at most once a second (at once on a phase change), cursor restored', () => {
    let now = 0;
    const s = stream(true);
    const screen = new DemoScreen({ out: s.out, color: false, clock: { monotonicMs: () => now } });
    screen.begin();
    expect(s.text()).toBe(`${ESC}?25l${ESC}2J`);
    screen.show(['a', 'b']);
    expect(s.text().endsWith(`${ESC}Ha${ESC}K\nb${ESC}K${ESC}J`)).toBe(true);
    const before = s.text().length;
    now = 900;
    screen.show(['c']);
    expect(s.text().length).toBe(before);
    screen.show(['d'], true);
    expect(s.text().endsWith(`${ESC}Hd${ESC}K${ESC}J`)).toBe(true);
    now = 2000;
    screen.show(['e']);
    expect(s.text().endsWith(`${ESC}He${ESC}K${ESC}J`)).toBe(true);
    screen.end(['f']);
    expect(s.text().endsWith(`${ESC}Hf${ESC}K${ESC}J${ESC}?25h\n`)).toBe(true);
  });

  it('elsewhere: plain frames every 5 s and at phase changes, no escape codes, the last frame not twice', () => {
    let now = 0;
    const s = stream(false);
    const screen = new DemoScreen({ out: s.out, color: false, clock: { monotonicMs: () => now } });
    screen.begin();
    screen.show(['one']);
    now = 4000;
    screen.show(['skipped']);
    screen.show(['phase'], true);
    now = 9000;
    screen.show(['five seconds on']);
    screen.end(['five seconds on']);
    expect(s.text()).toBe('one\n\nphase\n\nfive seconds on\n\n');
    screen.end();
    expect(s.text().includes('\u001b')).toBe(false);
  });

  it('the outage: from its drive fraction, at least its minimum wall time, then draining until the outbox is empty', () => {
    const o = new DemoOutage({ from: 0.4, to: 0.55, minMs: 4000 });
    expect(o.update(0.1, 0, 0)).toBeUndefined();
    expect(o.phase({ haveFix: true, driveEnded: false })).toBe('driving');
    expect(o.update(0.4, 0, 1000)).toBe('start');
    expect(o.phase({ haveFix: true, driveEnded: false })).toBe('outage');
    expect(o.update(0.9, 12, 2000)).toBeUndefined(); // past its fraction, not yet its minimum time
    expect(o.update(1, 21, 5000)).toBe('end');
    expect(o.peakBacklog).toBe(21);
    expect(o.phase({ haveFix: true, driveEnded: true })).toBe('draining');
    o.update(1, 3, 5500);
    expect(o.phase({ haveFix: true, driveEnded: true })).toBe('draining');
    o.update(1, 0, 6000);
    expect(o.phase({ haveFix: true, driveEnded: true })).toBe('drive ended');
  });
});

describe('demo summary', () => {
  it('counts in words that agree with the number: 1 fix, 2 events', () => {
    const s = { fixesRead: 119, recorded: 6, delivered: 6, duplicates: 0, passwordGrants: 1, refreshes: 0, outageRefusals: 5, dead: 0 };
    const one = renderSummary({ ...s, peakBacklog: 1, trips: ['a'] });
    expect(one).toContain('outage refusals  5 (backlog peaked at 1 fix, then drained)');
    expect(one).toContain('trips            1 event:');
    const two = renderSummary({ ...s, peakBacklog: 6, trips: ['a', 'b'] });
    expect(two).toContain('(backlog peaked at 6 fixes, then drained)');
    expect(two).toContain('trips            2 events:');
  });

  it('lists the engine events under their own row, and fails when an ignition change made none', () => {
    const s = { fixesRead: 119, recorded: 6, delivered: 6, duplicates: 0, passwordGrants: 1, refreshes: 0, outageRefusals: 5, dead: 0 };
    const both = renderSummary({ ...s, peakBacklog: 1, trips: ['stop', 'start'], engine: { lines: ['off', 'on'], changes: 2 } });
    expect(both).toContain(
      [
        '  trips            2 events:',
        '    stop',
        '    start',
        '  engine           2 events for 2 ignition changes (off at the depot, on to leave):',
        '    off',
        '    on',
      ].join('\n'),
    );
    expect(both).toMatch(/^result: every recorded fix delivered exactly once, one password grant, every ignition change an engine event$/m);
    const lost = renderSummary({ ...s, peakBacklog: 1, trips: [], engine: { lines: [], changes: 2 } });
    expect(lost).toContain('  engine           0 events for 2 ignition changes (off at the depot, on to leave)\n');
    expect(lost).toMatch(/^result: FAILED: 0 engine events delivered for 2 ignition changes$/m);
  });

  it('an engine event line carries the odometer and the engine hours when the event has them', () => {
    const [line] = tripLines([
      {
        eventType: 'stopEngineEvent',
        creationDate: '2026-11-22T08:01:51.000Z',
        geoReference: { lat: 52.095031, lon: 5.128581 },
        externalAttributes: { odometer: { value: 960, unit: 'm' }, engineHours: { value: 1234.5, unit: 'h' } },
      },
    ]);
    expect(line).toBe('08:01:51Z  stopEngineEvent   52.09503, 5.12858  odometer 0.96 km  engine 1234.5 h');
  });
});

describe('demo ignition', () => {
  it('off once parked at the depot, on before it leaves: one change per update, written whole', () => {
    const steps = depotIgnitionSteps([
      { phase: 'city', from: 0, to: 95 },
      { phase: 'depot', from: 95, to: 245 },
      { phase: 'city', from: 245, to: 300 },
    ]);
    expect(steps).toEqual([
      { atS: 105, on: false },
      { atS: 215, on: true },
    ]);
    expect(depotIgnitionSteps([{ phase: 'city', from: 0, to: 60 }])).toEqual([]);
    const file = path.join(tempDir(), 'ignition');
    const ignition = new DemoIgnition(file, steps);
    ignition.start();
    expect(readFileSync(file, 'utf8')).toBe('1\n');
    ignition.update(100);
    expect([readFileSync(file, 'utf8'), ignition.changes]).toEqual(['1\n', 0]);
    // A poll that passed both steps switches one now, the other at the next.
    ignition.update(230);
    expect([readFileSync(file, 'utf8'), ignition.changes]).toEqual(['0\n', 1]);
    ignition.update(230);
    expect([readFileSync(file, 'utf8'), ignition.changes]).toEqual(['1\n', 2]);
    ignition.update(400);
    expect(ignition.changes).toBe(2);
  });
});
