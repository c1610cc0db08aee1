import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Fix } from '../../src/fix/fix.js';
import { QualityGate } from '../../src/gnss/quality-gate.js';
import { ReplaySource } from '../../src/gnss/sources/replay-source.js';
import { silentLogger } from '../../src/log.js';
import { averageFixes, localDistanceM, type PositionedFix } from '../../src/sites/average.js';
import { captureLocation, CaptureError, gateFrom, type CaptureOptions } from '../../src/sites/capture.js';
import { DaemonFixFeed, isDaemonListening } from '../../src/fix-feed/daemon-feed.js';
import type { FixFeed } from '../../src/fix-feed/fix-feed.js';
import { FixPublisher, isFixSubscription } from '../../src/socket/fix-publisher.js';
import { GnssFixFeed } from '../../src/fix-feed/gnss-feed.js';
import { FIXTURE_START, knownPositionLog, KNOWN_POSITION, stationaryLog } from './nmea-writer.js';

const FIXTURE = path.resolve(import.meta.dirname, '../fixtures/locations/stationary-amersfoort.nmea');
const dir = mkdtempSync(path.join(os.tmpdir(), 'ta-loc-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function replayFeed(file: string): GnssFixFeed {
  return new GnssFixFeed({
    source: new ReplaySource({ file, speed: 0, logger: silentLogger() }),
    description: `the replay of ${path.basename(file)}`,
  });
}

function writeLog(name: string, text: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

function options(over: Partial<CaptureOptions> = {}): CaptureOptions {
  const gate = new QualityGate({ minMode: 3, maxHdop: 5 });
  return { samples: 30, maxSpreadM: 25, timeoutMs: 60_000, gate: gateFrom((f) => gate.check(f)), ...over };
}

async function refusal(feed: FixFeed, over: Partial<CaptureOptions> = {}): Promise<CaptureError> {
  const e = await captureLocation(feed, options(over)).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(CaptureError);
  return e as CaptureError;
}

describe('averageFixes', () => {
  const at = (lat: number, lon: number, extra: Partial<Fix> = {}): PositionedFix => ({ time: FIXTURE_START, mode: 3, lat, lon, ...extra });

  it('averages in metres and reports the largest distance from the average as the spread', () => {
    // 0.0001° of latitude is 11.12 m: two points 22.24 m apart, average in the middle.
    const avg = averageFixes([at(52.0001, 5, { altMSL: 10, hdop: 1 }), at(51.9999, 5, { altMSL: 20, hdop: 2 })]);
    expect(avg.lat).toBeCloseTo(52, 9);
    expect(avg.lon).toBeCloseTo(5, 9);
    expect(avg.spreadM).toBeCloseTo(11.12, 2);
    expect(avg.rmsM).toBeCloseTo(11.12, 2);
    expect(avg.altMSL).toBe(15);
    expect(avg.meanHdop).toBe(1.5);
  });

  it('averages across the 180° meridian without landing on the other side of the Earth', () => {
    const avg = averageFixes([at(-17, 179.99999), at(-17, -179.99999)]);
    expect(Math.abs(avg.lon)).toBeCloseTo(180, 4);
    expect(avg.spreadM).toBeLessThan(2);
  });
});

describe('location here from a replayed receiver (fixture at a known position)', () => {
  it('the fixture is what the writer produces (checksummed sentences, 32 3D epochs)', () => {
    expect(readFileSync(FIXTURE, 'utf8')).toBe(knownPositionLog());
  });

  it('averages 30 3D fixes to the known position, skipping the no-fix and 2D epochs', async () => {
    const progress: number[] = [];
    const r = await captureLocation(replayFeed(FIXTURE), options({ onProgress: (n) => progress.push(n) }));
    expect(r.samples).toBe(30);
    expect(progress.at(-1)).toBe(30);
    // The writer scatters fixes in opposite pairs around the true point; NMEA keeps 5 decimals of
    // a minute (about 2 cm), so the average is the true point to a few centimetres.
    expect(localDistanceM(r.lat, r.lon, KNOWN_POSITION.lat, KNOWN_POSITION.lon)).toBeLessThan(0.05);
    expect(r.spreadM).toBeGreaterThan(1.4);
    expect(r.spreadM).toBeLessThan(1.6);
    expect(r.rejected).toEqual({ '2D fix only': 2 });
    expect(r.firstTime).toBe(FIXTURE_START + 5000);
    expect(r.altMSL).toBeCloseTo(3.2, 5);
  });

  it('refuses without a 3D fix, saying so', async () => {
    const file = writeLog('two-d.nmea', stationaryLog({ ...KNOWN_POSITION, start: FIXTURE_START, noFix: 2, twoD: 20, threeD: 0 }));
    const e = await refusal(replayFeed(file));
    expect(e.code).toBe('LOCATION_NO_3D_FIX');
    expect(e.message).toContain('no 3D fix from the replay of two-d.nmea before the source ended: only 2D fixes came (20 fixes)');
  });

  it('refuses a receiver that produced nothing, with the link problem', async () => {
    const e = await refusal(replayFeed(path.join(dir, 'missing.nmea')));
    expect(e.code).toBe('LOCATION_NO_3D_FIX');
    expect(e.message).toMatch(/no fix at all came \(.*missing\.nmea: .*ENOENT/);
  });

  it('refuses when the spread is above the limit, reporting the spread measured', async () => {
    const file = writeLog('wide.nmea', stationaryLog({ ...KNOWN_POSITION, start: FIXTURE_START, threeD: 30, scatterM: 40 }));
    const e = await refusal(replayFeed(file));
    expect(e.code).toBe('LOCATION_SPREAD_TOO_LARGE');
    expect(e.message).toMatch(/^the 30 fixes spread over 40\.\d m \(RMS \d+\.\d m\), more than the limit of 25 m \(--max-spread\)/);
    // The same fixes pass with a limit above their spread.
    const ok = await captureLocation(replayFeed(file), options({ maxSpreadM: 45 }));
    expect(ok.spreadM).toBeCloseTo(40, 0);
  });

  it('refuses a moving vehicle', async () => {
    const file = writeLog('moving.nmea', stationaryLog({ ...KNOWN_POSITION, start: FIXTURE_START, threeD: 30, speedKnots: 12 }));
    const e = await refusal(replayFeed(file));
    expect(e.code).toBe('LOCATION_MOVING');
    expect(e.message).toContain('median speed 22.2 km/h');
  });

  it('refuses when fewer fixes than asked pass the gate, listing why the others did not', async () => {
    const e = await refusal(replayFeed(FIXTURE), { samples: 40 });
    expect(e.code).toBe('LOCATION_TOO_FEW_FIXES');
    expect(e.message).toContain(
      'only 32 of 40 fixes from the replay of stationary-amersfoort.nmea passed the quality gate before the source ended (not used: 2 2D fix only)',
    );
  });

  it('applies the quality gate (HDOP limit)', async () => {
    const gate = new QualityGate({ minMode: 3, maxHdop: 0.5 });
    const e = await refusal(replayFeed(FIXTURE), { gate: gateFrom((f) => gate.check(f)) });
    expect(e.code).toBe('LOCATION_TOO_FEW_FIXES');
    expect(e.message).toContain('32 HDOP above quality.maxHdop');
  });
});

describe('location here from the running daemon (fix subscription on its status socket)', () => {
  /** A status socket as the daemon serves it: the subscribe request goes to a FixPublisher. */
  async function daemonSocket(
    name: string,
    answer: (first: unknown, socket: Socket) => void,
  ): Promise<{ server: Server; socketPath: string }> {
    const socketPath = path.join(dir, name);
    const server = createServer((socket) => {
      let buf = '';
      socket.on('data', function onData(chunk) {
        buf += chunk.toString('utf8');
        const nl = buf.indexOf('\n');
        if (nl < 0) return;
        socket.off('data', onData);
        answer(JSON.parse(buf.slice(0, nl)), socket);
      });
    });
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    return { server, socketPath };
  }

  it('takes the fixes from the daemon and averages them to the known position', async () => {
    const publisher = new FixPublisher();
    let subscribed!: () => void;
    const ready = new Promise<void>((r) => (subscribed = r));
    const { server, socketPath } = await daemonSocket('daemon.sock', (first, socket) => {
      if (isFixSubscription(first)) {
        publisher.subscribe(socket);
        subscribed();
      } else socket.end('{"error":{"code":"UNKNOWN_REQUEST","message":"?"}}\n');
    });
    try {
      expect(await isDaemonListening(socketPath)).toBe(true);
      const feed = new DaemonFixFeed({ socketPath });
      const capture = captureLocation(feed, options());
      await ready;
      // Publish the fixture's epochs as the daemon's decoder produces them.
      const fixes: Fix[] = [];
      for await (const f of replayFeed(FIXTURE).fixes(new AbortController().signal)) fixes.push(f);
      for (const f of fixes) publisher.publish({ ...f, satellites: [{ constellation: 'GPS', id: 5, used: true }] });
      const r = await capture;
      expect(r.samples).toBe(30);
      expect(localDistanceM(r.lat, r.lon, KNOWN_POSITION.lat, KNOWN_POSITION.lon)).toBeLessThan(0.05);
      expect(r.rejected).toEqual({ '2D fix only': 2 });
      // The client closed its subscription when it had enough.
      await expect.poll(() => publisher.subscriberCount).toBe(0);
    } finally {
      await publisher.stop();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('a daemon that does not serve fixes gets a clear message, not a second reader on the port', async () => {
    const { server, socketPath } = await daemonSocket('old-daemon.sock', (_first, socket) =>
      socket.end('{"error":{"code":"UNKNOWN_REQUEST","message":"unknown request"}}\n'),
    );
    try {
      const e = await captureLocation(new DaemonFixFeed({ socketPath }), options()).then(
        () => undefined,
        (err: unknown) => err as Error & { code?: string },
      );
      expect(e?.code).toBe('DAEMON_NO_FIXES');
      expect(e?.message).toContain(
        'the running daemon cannot serve fixes (it answered: UNKNOWN_REQUEST: unknown request); it holds the receiver, so stop it first',
      );
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('no daemon: a missing socket and a stale socket file both read as not running', async () => {
    expect(await isDaemonListening(path.join(dir, 'nothing.sock'))).toBe(false);
    const stale = path.join(dir, 'stale.sock');
    const { server } = await daemonSocket('stale.sock', () => undefined);
    // Closing a listening Unix socket server removes the file; recreate it as a dead socket file
    // the way a crashed daemon leaves it.
    await new Promise<void>((r) => server.close(() => r()));
    writeFileSync(stale, '');
    expect(await isDaemonListening(stale)).toBe(false);
  });

  it('a slow subscriber is disconnected instead of growing the daemon memory', () => {
    const publisher = new FixPublisher({ maxQueuedBytes: 10 });
    const written: string[] = [];
    let ended = '';
    const fake = {
      destroyed: false,
      writableLength: 0,
      write(s: string) {
        written.push(s);
        this.writableLength += s.length;
        return false;
      },
      end(s: string) {
        ended = s;
      },
      once() {
        return this;
      },
    };
    publisher.subscribe(fake as unknown as Socket);
    publisher.publish({ time: 1, mode: 3, lat: 1, lon: 1 });
    publisher.publish({ time: 2, mode: 3, lat: 1, lon: 1 });
    expect(written[0]).toBe('{"subscribed":"fixes"}\n');
    expect(ended).toContain('SLOW_SUBSCRIBER');
    expect(publisher.subscriberCount).toBe(0);
  });
});
