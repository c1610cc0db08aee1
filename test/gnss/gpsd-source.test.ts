/**
 * GpsdSource against the real gpsd on a socat pty (restart, no receiver, silence), and against a
 * loopback server that misbehaves as no gpsd should (huge and malformed lines).
 */
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { EventEmitter } from 'node:events';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { GpsdSource, type GpsdConnector, type GpsdSocket } from '../../src/gnss/sources/gpsd-source.js';
import { silentLogger } from '../../src/log.js';
import { sentence } from '../../src/sim/receiver/nmea-format.js';
import { HAVE_SOCAT, ptyPair } from '../e2e/daemon.js';
import { HAVE_GPSD, startGpsd } from '../helpers/gpsd.js';
import { freePort } from '../helpers/ports.js';
import { waitFor } from '../helpers/wait.js';

const FAST = { initialMs: 50, maxMs: 200, jitter: 0 };

function workDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ta-gpsd-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A receiver writing one RMC+GGA epoch every 100 ms into the pty until the test ends. */
function feed(input: string): { epochs: () => number } {
  let n = 0;
  const timer = setInterval(() => {
    const s = n++;
    const hhmmss = `12${String(Math.floor(s / 600) % 60).padStart(2, '0')}${String(Math.floor(s / 10) % 60).padStart(2, '0')}.${s % 10}0`;
    appendFileSync(
      input,
      `${sentence(`GPRMC,${hhmmss},A,4807.038,N,01131.000,E,022.4,084.4,241126,003.1,W,A`)}\r\n${sentence(`GPGGA,${hhmmss},4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,`)}\r\n`,
    );
  }, 100);
  onTestFinished(() => clearInterval(timer));
  return { epochs: () => n };
}

function source(port: number, o: { silenceMs?: number } = {}): { src: GpsdSource; lines: string[] } {
  const src = new GpsdSource({ address: { host: '127.0.0.1', port }, logger: silentLogger(), backoff: FAST, ...o });
  const lines: string[] = [];
  src.onData((c) =>
    lines.push(
      ...c
        .toString('latin1')
        .split('\n')
        .filter((l) => l !== ''),
    ),
  );
  onTestFinished(() => src.stop());
  return { src, lines };
}

// A missing gpsd is said by helpers/gpsd.ts; a missing socat here.
if (HAVE_GPSD && !HAVE_SOCAT) process.stderr.write('skipping GpsdSource with the real gpsd: socat is missing (apt-get install socat)\n');

describe.skipIf(!HAVE_GPSD || !HAVE_SOCAT)('GpsdSource with the real gpsd', () => {
  it('reads the receiver through gpsd, survives a gpsd restart, and counts the reconnect', { timeout: 60_000 }, async () => {
    const dir = workDir();
    const pty = await ptyPair(dir);
    onTestFinished(() => pty.stop());
    const port = await freePort();
    let gpsd = startGpsd(pty.device, port);
    feed(pty.input);
    const { src, lines } = source(port);
    await src.start();
    await waitFor('NMEA through gpsd', () => lines.some((l) => l.startsWith('$GPGGA')), { detail: () => gpsd.log() });
    expect(src.link()).toMatchObject({ status: 'open', path: `gpsd 127.0.0.1:${port} -> ${pty.device}`, reconnects: 0 });

    await gpsd.kill();
    await waitFor('the link to notice', () => src.link().status === 'retrying');
    expect(src.link().lastError).toMatch(/closed|ECONNRESET|ECONNREFUSED/);
    gpsd = startGpsd(pty.device, port);
    const before = lines.length;
    await waitFor('NMEA again after the restart', () => lines.length > before + 4 && src.link().status === 'open', {
      detail: () => gpsd.log(),
    });
    expect(src.link().reconnects).toBe(1);
    expect(lines.every((l) => /^\$GP(RMC|GGA),.*\*[0-9A-F]{2}\r?$/.test(l))).toBe(true);
  });

  it('gpsd without a receiver: says so, and reconnects when nothing comes', { timeout: 60_000 }, async () => {
    const port = await freePort();
    const gpsd = startGpsd(undefined, port, path.join(workDir(), 'gpsd.sock'));
    const { src } = source(port, { silenceMs: 300 });
    await src.start();
    // An open link that brings nothing, with gpsd's reason (the silence may already have cycled it once).
    await waitFor(
      'gpsd to answer the watch on an open link',
      () => src.link().status === 'open' && /gpsd has no receiver yet/.test(src.link().lastError ?? ''),
      { detail: () => gpsd.log() },
    );
    await waitFor('a reconnect after the silence', () => (src.link().reconnects ?? 0) >= 1, { detail: () => gpsd.log() });
    expect(src.counters.silences).toBeGreaterThanOrEqual(1);
    // The better explanation stays.
    expect(src.link().lastError).toMatch(/gpsd has no receiver yet/);
  });
});

describe('GpsdSource against a misbehaving server', () => {
  it('skips and counts huge and malformed lines, keeps the sentences, and follows DEVICE notices', async () => {
    const gga = sentence('GPGGA,120000.00,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,');
    const server = net.createServer((sock) => {
      sock.write('{"class":"VERSION","release":"3.22"}\n');
      sock.once('data', () => {
        sock.write(
          '{"class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/ttyACM0","activated":"2026-11-24T00:00:00.000Z","driver":"u-blox"}]}\n',
        );
        // 8 MiB without a newline, in 64 KiB pieces: the source keeps at most 64 KiB of it.
        const piece = Buffer.alloc(65_536, 0x7b);
        for (let i = 0; i < 128; i++) sock.write(piece);
        sock.write(`\n{"class":"TPV",\n{not json}\n${gga}\r\n`);
        sock.write('{"class":"DEVICE","path":"/dev/ttyACM0","activated":0}\n');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    onTestFinished(() => new Promise<void>((r) => server.close(() => r())));
    const port = (server.address() as net.AddressInfo).port;
    const { src, lines } = source(port);
    await src.start();
    await waitFor('the DEVICE notice', () => /lost its receiver/.test(src.link().lastError ?? ''));
    expect(lines).toEqual([gga]);
    expect(src.counters).toMatchObject({ overlong: 1, malformed: 3 });
    expect(src.info()).toEqual({ release: '3.22', device: { path: '/dev/ttyACM0', active: false, driver: 'u-blox' } });
    expect(src.link().path).toBe(`gpsd 127.0.0.1:${port} -> /dev/ttyACM0`);
    // Bounded: all but the last 64 KiB of the 8 MiB line were dropped as they came, never held.
    expect(src.counters.droppedBytes).toBe(128 * 65_536 - 65_536);
  });
});

describe('GpsdSource when gpsd never answers the connection', () => {
  it('gives up the attempt after silenceMs, says why, and tries again, instead of waiting for the kernel', async () => {
    // A host that drops packets: the socket neither connects nor fails (the kernel would wait ~2 min).
    const sockets: EventEmitter[] = [];
    const connect: GpsdConnector = () => {
      const socket = Object.assign(new EventEmitter(), { write: () => true, destroy: () => undefined }) as unknown as GpsdSocket;
      sockets.push(socket as unknown as EventEmitter);
      return socket;
    };
    const src = new GpsdSource({
      address: { host: '192.0.2.1', port: 2947 },
      logger: silentLogger(),
      backoff: FAST,
      silenceMs: 100,
      connect,
    });
    onTestFinished(() => src.stop());
    await src.start(); // resolves after the first attempt, which never connected
    expect(src.link().lastError).toMatch(/did not accept the connection within/);
    await waitFor('a second attempt', () => sockets.length >= 2);
    expect(sockets[0]!.listenerCount('connect')).toBe(0); // the abandoned socket was let go
  });
});
