/**
 * The receiver's health through gpsd: the antenna's TXT notices passed through the real gpsd
 * (gpsfake), and TPV's ant/antPwr/jam (which Debian's gpsd 3.22 does not write) from a loopback
 * server speaking gpsd's protocol, both into the real pipeline.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { GnssPipeline } from '../../src/gnss/pipeline.js';
import { GpsdSource } from '../../src/gnss/sources/gpsd-source.js';
import { silentLogger } from '../../src/log.js';
import { driveText, generateDrive } from '../../src/sim/receiver/index.js';
import { sentence } from '../../src/sim/receiver/nmea-format.js';
import { HAVE_GPSD, startGpsfake } from '../helpers/gpsd.js';
import { freePort } from '../helpers/ports.js';
import { waitFor } from '../helpers/wait.js';

function pipeline(port: number): GnssPipeline {
  const source = new GpsdSource({
    address: { host: '127.0.0.1', port },
    logger: silentLogger(),
    backoff: { initialMs: 50, maxMs: 200, jitter: 0 },
  });
  const p = new GnssPipeline({ source, logger: silentLogger(), sink: { record: () => undefined } });
  onTestFinished(() => p.stop());
  return p;
}

describe.skipIf(!HAVE_GPSD)('receiver health through the real gpsd', () => {
  it("the receiver's ANTSTATUS notices pass through gpsd: the antenna goes OPEN", { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ta-rh-gpsd-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const log = path.join(dir, 'drive.nmea');
    writeFileSync(log, driveText(generateDrive({ minutes: 1, seed: 3, antenna: [{ atS: 30, state: 'OPEN' }] })));
    const port = await freePort();
    startGpsfake(log, port);
    const p = pipeline(port);
    // The source retries until gpsfake's gpsd takes the connection.
    await p.start();
    await waitFor('the antenna open', () => p.state().health.antenna === 'OPEN');
    expect(p.state().health.antennaFrom).toBe('nmea');
  });
});

describe('receiver health from gpsd TPV fields', () => {
  for (const [code, state] of [
    [2, 'OPEN'],
    [3, 'SHORT'],
  ] as const) {
    it(`ant ${code} is ${state} (gps.h), jam 180 is jamming suspected`, async () => {
      const gga = sentence('GPGGA,120000.00,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,');
      const server = net.createServer((sock) => {
        sock.write('{"class":"VERSION","release":"3.25"}\n');
        sock.once('data', () => {
          sock.write('{"class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/ttyACM0","activated":"2026-11-24T00:00:00.000Z"}]}\n');
          sock.write(`${gga}\r\n{"class":"TPV","device":"/dev/ttyACM0","mode":3,"ant":${code},"antPwr":2,"jam":180}\n`);
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      onTestFinished(() => new Promise<void>((r) => server.close(() => r())));
      const p = pipeline((server.address() as net.AddressInfo).port);
      await p.start();
      await waitFor('the TPV', () => p.state().health.antenna !== 'unknown');
      expect(p.state().health).toMatchObject({
        antenna: state,
        antennaFrom: 'gpsd',
        antennaPower: 'on',
        jamming: { state: 'suspected', indicator: 180 },
      });
    });
  }
});
