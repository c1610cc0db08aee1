/**
 * `telematics-agent run` reading the receiver through the real gpsd: a socat pty is the receiver,
 * gpsd reads it on a free loopback port, the daemon watches gpsd (gnss.gpsd), and the simulator is
 * the platform. gpsd is killed and started again in the middle of the drive: the daemon reconnects,
 * every fix of the drive reaches the simulator exactly once, and `status` and `doctor` show the gpsd link.
 */
import { closeSync, openSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createDecoder } from '../../src/gnss/decoder.js';
import { GnssPipeline } from '../../src/gnss/pipeline.js';
import { ReplaySource } from '../../src/gnss/sources/replay-source.js';
import { silentLogger } from '../../src/log.js';
import { sentence } from '../../src/sim/receiver/nmea-format.js';
import { driveText, generateDrive } from '../../src/sim/receiver/index.js';
import { requestSnapshot } from '../../src/status/status-client.js';
import { HAVE_GPSD, startGpsd } from '../helpers/gpsd.js';
import { freePort } from '../helpers/ports.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait.js';
import { HAVE_SOCAT, receivedByTime, startPtyDaemon } from './daemon.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Writes the epochs [from, to) into the pty, two every 40 ms (5x a 10 Hz receiver). */
async function feed(input: string, epochs: string[], from: number, to: number): Promise<void> {
  const fd = openSync(input, 'w');
  try {
    for (let i = from; i < to; i += 2) {
      writeSync(fd, epochs.slice(i, Math.min(i + 2, to)).join(''));
      await new Promise((r) => setTimeout(r, 40));
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * gpsd discards what a receiver sends while it identifies it after opening the device (about half
 * a second here). A real receiver talks all the time; this one says TXT until the daemon hears it,
 * so that the drive's fixes all come after gpsd's warm-up.
 */
async function warmUp(input: string, lines: () => Promise<number>): Promise<void> {
  const start = await lines();
  const fd = openSync(input, 'w');
  try {
    await waitFor(
      'gpsd passing the receiver on',
      async () => {
        writeSync(fd, `${sentence('GPTXT,01,01,02,warming up')}\r\n`);
        return (await lines()) >= start + 3;
      },
      { timeoutMs: 30_000, intervalMs: 50 },
    );
  } finally {
    closeSync(fd);
  }
}

/** The fix times the pipeline records from `text` read from a file (the serial path's decoding, gate and policy). */
async function recordedOffline(dir: string, text: string): Promise<number[]> {
  const file = path.join(dir, 'drive.nmea');
  writeFileSync(file, text);
  const times: number[] = [];
  const source = new ReplaySource({ file, speed: 0, logger: silentLogger() });
  const pipeline = new GnssPipeline({
    source,
    logger: silentLogger(),
    sink: { record: (f) => times.push(f.time) },
    recording: { mode: 'all' },
  });
  await pipeline.start();
  await source.finished();
  await pipeline.stop();
  return times.sort((a, b) => a - b);
}

// A missing gpsd is said by helpers/gpsd.ts; a missing socat here.
if (HAVE_GPSD && !HAVE_SOCAT) process.stderr.write('skipping run over the real gpsd: socat is missing (apt-get install socat)\n');

describe.skipIf(!HAVE_GPSD || !HAVE_SOCAT)('telematics-agent run over the real gpsd', () => {
  it('delivers the drive once per fix across a gpsd restart; status shows the gpsd link', { timeout: 180_000 }, async () => {
    const port = await freePort();
    let gpsd!: ReturnType<typeof startGpsd>;
    // gpsd reads the pty, and the daemon reads gpsd.
    const { dir, sim, pty, daemon, configFile, socket } = await startPtyDaemon(cleanups, {}, (p) => {
      gpsd = startGpsd(p.device, port);
      cleanups.push(() => gpsd.kill());
      return { gpsd: `127.0.0.1:${port}` };
    });
    const receiver = async () => (await requestSnapshot(socket, 1000).catch(() => undefined))?.receiver;
    await waitFor('the daemon watching gpsd', async () => (await receiver())?.link === 'open', { timeoutMs: 30_000, detail: daemon.log });

    const text = driveText(generateDrive({ minutes: 1, hz: 10, seed: 11 }));
    const epochs = text.split(/(?=\$G[PN]RMC)/);
    const half = Math.floor(epochs.length / 2);
    const lines = async () => (await receiver())?.lines ?? 0;
    await warmUp(pty.input, lines);
    await feed(pty.input, epochs, 0, half);
    // Every epoch of the first half decoded (the gate and policy then decide what is recorded).
    const firstHalf = createDecoder();
    const firstFixes = [...firstHalf.pushChunk(epochs.slice(0, half).join('')), ...firstHalf.flush()];
    const halfEpochs = firstFixes.length;
    // What gpsd passed on, once the daemon has read it all (fixesRead stops growing).
    let read = -1;
    await waitFor(
      'the first half read through gpsd',
      async () => {
        const now = (await receiver())?.fixesRead ?? 0;
        const settled = now > 0 && now === read;
        read = now;
        return settled;
      },
      { timeoutMs: 30_000, intervalMs: 1000, detail: () => `${gpsd.log()}\n${daemon.log().slice(-1500)}` },
    );
    expect(read, 'epochs of the first half read through gpsd').toBe(halfEpochs);

    // gpsd goes away mid-drive and comes back on the same port and receiver.
    await gpsd.kill();
    await waitFor('the daemon to see gpsd gone', async () => (await receiver())?.link === 'retrying', { detail: daemon.log });
    gpsd = startGpsd(pty.device, port);
    await waitFor(
      'the daemon back on gpsd',
      async () => {
        const r = await receiver();
        return r?.link === 'open' && (r.reconnects ?? 0) >= 1;
      },
      { timeoutMs: 30_000, detail: () => `${daemon.log()}\n${gpsd.log()}` },
    );
    await warmUp(pty.input, lines);
    // doctor beside the running service, while the drive goes on: it asks gpsd itself.
    const doctor = runCli(['doctor', '--config', configFile]);
    await feed(pty.input, epochs, half, epochs.length);
    const doc = await doctor;
    expect(doc.stdout).toMatch(
      new RegExp(
        `PASS\\s+gpsd\\s+gpsd at 127\\.0\\.0\\.1:${port} \\(gpsd 3\\.\\d+\\) serves ${pty.device}( \\(\\w+\\))?: \\d+ bytes of NMEA in 3 s`,
      ),
    );
    expect(doc.stdout).toMatch(/SKIP\s+serial device\s+gpsd owns the receiver/);
    expect(doc.stdout).toMatch(/PASS\s+NMEA\s+the running agent \(pid \d+\) reads gpsd 127\.0\.0\.1:\d+ -> \/dev\/pts\/\d+: last sentence/);

    // What the serial path records from the same drive: the pipeline on a replay of it.
    const expected = await recordedOffline(dir, text);
    let recorded = 0;
    await waitFor(
      'every fix delivered',
      async () => {
        const s = await requestSnapshot(socket, 1000).catch(() => undefined);
        recorded = s?.outbox.recorded ?? 0;
        return (
          s !== undefined && s.outbox.pending === 0 && sim.events.size === s.outbox.recorded && (s.receiver?.fixesRead ?? 0) >= read + 1
        );
      },
      { timeoutMs: 90_000, detail: () => `${gpsd.log()}\n${daemon.log().slice(-1500)}` },
    );
    const byTime = receivedByTime(sim.events);
    expect(sim.stats.duplicates).toBe(0);
    for (const ids of byTime.values()) expect(ids.size).toBe(1);
    expect(sim.events.size).toBe(recorded);
    // Every fix of the drive (as the serial path records it from the same text) arrived exactly once.
    const delivered = [...byTime.keys()].sort((a, b) => a - b);
    const got = new Set(delivered);
    const missingAt = expected.map((t, i) => (got.has(t) ? -1 : i)).filter((i) => i >= 0);
    console.log(
      `run over gpsd: ${delivered.length}/${expected.length} fixes of the drive delivered once each, 0 duplicates, 1 gpsd restart; not delivered (index): ${missingAt.join(' ') || 'none'}`,
    );
    expect(delivered).toEqual(expected);

    const status = await runCli(['status', '--config', configFile]);
    expect(status.stdout).toMatch(
      new RegExp(
        `^receiver\\s+gpsd 127\\.0\\.0\\.1:${port} -> ${pty.device}\\s+open\\s+last sentence \\d+\\.\\d s ago\\s+reconnects 1$`,
        'm',
      ),
    );
    const json = JSON.parse((await runCli(['status', '--json', '--config', configFile])).stdout) as {
      receiver: { port: string; reconnects: number };
    };
    expect(json.receiver).toMatchObject({ port: `gpsd 127.0.0.1:${port} -> ${pty.device}`, reconnects: 1 });

    daemon.child.kill('SIGTERM');
    expect(await daemon.exited, daemon.log().slice(-2000)).toEqual({ code: 0, signal: null });
  });
});
