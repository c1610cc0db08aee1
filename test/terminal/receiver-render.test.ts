/**
 * The receiver lines of `status`: a gpsd link shows where gpsd reads from, reconnects and GPS
 * week-rollover corrections are counted; the daemon provider passes them through.
 */
import { describe, expect, it } from 'vitest';
import { receiverStatus } from '../../src/status/daemon-provider.js';
import { renderStatus } from '../../src/terminal/status-screen.js';
import { ReceiverHealth } from '../../src/gnss/health/receiver-health.js';
import { createDecoder } from '../../src/gnss/decoder.js';
import { generateDrive } from '../../src/sim/receiver/index.js';
import { liveSnapshot } from '../status/fixtures.js';

const NOW = Date.UTC(2026, 10, 24, 12);

describe('status receiver lines', () => {
  it('shows the gpsd link whole, its reconnects and the rollover corrections', () => {
    const s = liveSnapshot(NOW, '/tmp/x', (snap) => {
      if (!snap.receiver) throw new Error('fixture without receiver');
      snap.receiver.port = 'gpsd 127.0.0.1:2947 -> /dev/ttyACM0';
      snap.receiver.reconnects = 2;
      snap.receiver.rolloverCorrections = 1800;
    });
    const text = renderStatus(s, { color: false, nowMs: NOW });
    expect(text).toMatch(/receiver\s+gpsd 127\.0\.0\.1:2947 -> \/dev\/ttyACM0  open  last sentence 0\.2 s ago  reconnects 2/);
    expect(text).toMatch(/dates\s+1800 corrected by 1024 weeks \(GPS week rollover\)/);
  });

  it("an open gpsd link that brings nothing shows gpsd's reason", () => {
    const s = liveSnapshot(NOW, '/tmp/x', (snap) => {
      if (!snap.receiver) throw new Error('fixture without receiver');
      snap.receiver.port = 'gpsd 127.0.0.1:2947';
      delete snap.receiver.lastSentenceAgeS;
      snap.receiver.lastError = 'gpsd has no receiver yet (check DEVICES= in /etc/default/gpsd, or plug it in)';
    });
    expect(renderStatus(s, { color: false, nowMs: NOW })).toContain('gpsd has no receiver yet');
  });

  it('shows neither line while there is nothing to count', () => {
    const text = renderStatus(liveSnapshot(NOW, '/tmp/x'), { color: false, nowMs: NOW });
    expect(text).not.toMatch(/reconnects|rollover/);
  });

  it('the provider passes the counters through to the snapshot', () => {
    const r = receiverStatus({ port: 'gpsd 127.0.0.1:2947', link: 'open', satellites: [], reconnects: 3, rolloverCorrections: 7 }, 0);
    expect(r).toMatchObject({ reconnects: 3, rolloverCorrections: 7 });
  });

  it("the receiver's health: its own row when the antenna has said something, else the signal on the sats row (the screen fits 24 lines)", () => {
    const health = new ReceiverHealth();
    const drive = generateDrive({ minutes: 1, seed: 2 });
    const decoder = createDecoder({ sky: true, onFix: (fix) => health.epoch(fix.time, decoder.satellites()) });
    for (const line of drive.lines) decoder.push(line);
    const render = (): string =>
      renderStatus(
        liveSnapshot(NOW, '/tmp/x', (snap) => {
          snap.receiver!.health = health.state();
        }),
        { color: false, nowMs: NOW },
      );
    const quiet = render();
    expect(quiet).toMatch(/^ {2}sats\s+used .*  C\/N0 4\d dB-Hz$/m);
    expect(quiet).not.toMatch(/antenna/);
    health.text('ANTSTATUS=OK');
    const told = render();
    expect(told).toMatch(/^receiver\s+antenna OK {2}C\/N0 4\d dB-Hz \(top 4\) {2}\d+ above 30 {2}jamming none$/m);
    expect(told).not.toMatch(/^ {2}sats.*C\/N0/m);
  });
});
