import { open } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { createDecoder } from '../../src/gnss/decoder.js';
import { averageFixes, hasPosition, localDistanceM, type AveragedPosition, type PositionedFix } from '../../src/sites/average.js';
import type { OtmLocation } from '../../src/sites/site-types.js';
import { requestSnapshot } from '../../src/status/status-client.js';
import type { StatusSnapshot } from '../../src/status/snapshot.js';
import { loadOtmSchemas } from '../helpers/otm-schema.js';
import { runCli } from '../helpers/run-cli.js';
import { KNOWN_POSITION, stationaryLog } from '../sites/nmea-writer.js';
import { HAVE_SOCAT, startPtyDaemon, type PtyDaemon } from './daemon.js';
import { waitFor } from '../helpers/wait.js';

/**
 * `location here` while the real daemon (`telematics-agent run`) holds the serial port.
 * The receiver is a socat pty fed by the test with a standing receiver's NMEA at a known position;
 * the daemon reads it and uploads its own fixes to the in-process platform simulator, and the built
 * CLI takes its fixes from the daemon's status socket instead of opening the port a second time.
 */

if (!HAVE_SOCAT) process.stderr.write('skipping location here e2e against the running daemon: socat is missing (apt-get install socat)\n');

const otm = await loadOtmSchemas();

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** `location here`'s default number of fixes. */
const SAMPLES = 30;
/** Epochs per generated stretch of the log: even, because the writer scatters fixes in opposite pairs. */
const CHUNK_EPOCHS = 40;
/** One epoch (1 s of GNSS time) is written into the pty every TICK_MS. */
const TICK_MS = 100;
/** A command that hangs is killed well before the test's own timeout, so no child outlives it. */
const CLI_TIMEOUT_MS = 180_000;
const TEST_TIMEOUT_MS = 300_000;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

interface StandingReceiver {
  /** Every byte written into the pty so far. */
  written(): string;
  /** Why writing stopped early, if it did. */
  error(): unknown;
  stop(): Promise<void>;
}

/**
 * A receiver standing at KNOWN_POSITION, written by the same writer and with the same scatter as
 * the location fixture (test/fixtures/locations/stationary-amersfoort.nmea: 3 epochs without a fix,
 * 2 2D ones, then 3D ones 1.5 m around the point in opposite pairs), but with GNSS time running on
 * from now for as long as the test needs. The fixture itself cannot be looped: its epoch times would
 * repeat, and the daemon's and the CLI's quality gates drop repeated and backward epochs.
 */
function standingReceiver(input: string): StandingReceiver {
  const epochsWritten: string[] = [];
  let stopping = false;
  let failure: unknown;
  const done = (async () => {
    // Asynchronous writes: a pty that stopped draining must not block the simulator in this process.
    const file = await open(input, 'w');
    try {
      let start = Math.floor(Date.now() / 1000) * 1000;
      for (let n = 0; !stopping; n++) {
        const first = n === 0 ? { noFix: 3, twoD: 2 } : {};
        const epochs = stationaryLog({ ...KNOWN_POSITION, start, scatterM: 1.5, threeD: CHUNK_EPOCHS, ...first }).split(/(?=\$GPRMC)/);
        start += epochs.length * 1000;
        for (const epoch of epochs) {
          if (stopping) return;
          await file.write(epoch);
          epochsWritten.push(epoch);
          await sleep(TICK_MS);
        }
      }
    } finally {
      await file.close();
    }
  })().catch((e: unknown) => {
    failure = e;
  });
  return {
    written: () => epochsWritten.join(''),
    error: () => failure,
    async stop() {
      stopping = true;
      // A write stuck on a pty nobody reads ends when socat is stopped (the next cleanup step).
      await Promise.race([done, sleep(5000)]);
    },
  };
}

/** The pty, the daemon on it, and the receiver writing; resolves once the daemon delivers its own fixes. */
async function daemonWithReceiver(): Promise<PtyDaemon & { receiver: StandingReceiver }> {
  const e2e = await startPtyDaemon(cleanups);
  const receiver = standingReceiver(e2e.pty.input);
  cleanups.push(() => receiver.stop());
  await waitFor(
    'the daemon reading the receiver and delivering its fixes',
    async () => {
      if (receiver.error() !== undefined) throw new Error(`writing the pty failed: ${String(receiver.error())}`);
      const s = await snapshot(e2e.socket);
      return (s?.receiver?.fixesRead ?? 0) > 0 && e2e.sim.events.size > 0;
    },
    { timeoutMs: 120_000, detail: e2e.daemon.log },
  );
  return { ...e2e, receiver };
}

function snapshot(socket: string): Promise<StatusSnapshot | undefined> {
  return requestSnapshot(socket, 2000).catch(() => undefined);
}

/**
 * The average of every run of `n` consecutive 3D epochs in the NMEA written, decoded as the daemon
 * decodes it: the survey must equal one of them exactly (the daemon forwards every epoch in order).
 */
function consecutiveAverages(nmea: string, n: number): AveragedPosition[] {
  const decoder = createDecoder();
  const fixes = [...decoder.pushChunk(nmea), ...decoder.flush()].filter((f): f is PositionedFix => f.mode === 3 && hasPosition(f));
  const out: AveragedPosition[] = [];
  for (let i = 0; i + n <= fixes.length; i++) out.push(averageFixes(fixes.slice(i, i + n)));
  return out;
}

/** The line `location here` prints for an average (src/cli/location.ts). */
function captureLine(a: AveragedPosition): string {
  return `averaged ${a.samples} fixes: lat ${a.lat.toFixed(7)}, lon ${a.lon.toFixed(7)}; spread ${a.spreadM.toFixed(1)} m (largest distance from the average), RMS ${a.rmsM.toFixed(1)} m, mean HDOP ${a.meanHdop?.toFixed(1)}`;
}

/** The daemon still runs, still holds the port it opened at start (never a link error), and still delivers. */
async function expectDaemonUndisturbed(e2e: PtyDaemon, before: StatusSnapshot): Promise<void> {
  const { sim, socket, daemon } = e2e;
  const events = sim.events.size;
  const fixesRead = before.receiver?.fixesRead ?? 0;
  await waitFor(
    'the daemon delivering more of its own fixes',
    async () => {
      if (daemon.child.exitCode !== null || daemon.child.signalCode !== null)
        throw new Error(`the daemon exited (${daemon.child.exitCode ?? daemon.child.signalCode}):\n${daemon.log().slice(-3000)}`);
      const s = await snapshot(socket);
      return sim.events.size >= events + 10 && (s?.receiver?.fixesRead ?? 0) >= fixesRead + 10;
    },
    { timeoutMs: 120_000, detail: daemon.log },
  );
  const after = await requestSnapshot(socket, 5000);
  expect(after.daemon).toMatchObject({ running: true, pid: daemon.child.pid });
  expect(after.receiver).toMatchObject({ port: e2e.pty.device, link: 'open' });
  expect(after.receiver?.lastError, 'the daemon lost the receiver port').toBeUndefined();
  expect(after.receiver?.mode).toBe(3);
  expect(localDistanceM(after.receiver?.lat ?? 0, after.receiver?.lon ?? 0, KNOWN_POSITION.lat, KNOWN_POSITION.lon)).toBeLessThan(2);
  expect(sim.stats.duplicates).toBe(0);
  expect(sim.stats.invalidEvents).toBe(0);
}

describe.skipIf(!HAVE_SOCAT)('location here against the running daemon (real `run` over a pty, real HTTP to the simulator)', () => {
  it(
    "surveys from the daemon's fixes, uploads the averaged known position with the daemon's token, and leaves the daemon undisturbed",
    async () => {
      const e2e = await daemonWithReceiver();
      const { sim, socket, configFile, receiver } = e2e;
      const before = await requestSnapshot(socket, 5000);
      expect(sim.stats.passwordGrants).toBe(1);

      const name = 'Depot Amersfoort';
      const r = await runCli(
        [
          'location',
          'here',
          '--config',
          configFile,
          '--name',
          name,
          '--type',
          'warehouse',
          '--street',
          'Valutaboulevard',
          '--house-number',
          '16',
          '--postal-code',
          '3825BT',
          '--city',
          'Amersfoort',
          '--country',
          'NL',
        ],
        { timeoutMs: CLI_TIMEOUT_MS },
      );
      const output = `exit ${r.code ?? r.signal}\nstderr:\n${r.stderr}\nstdout:\n${r.stdout}\ndaemon log:\n${e2e.daemon.log().slice(-3000)}`;
      expect(r.stderr, output).toContain(`sampling ${SAMPLES} fixes from the running daemon (${socket}) ...`);
      expect(r.code, output).toBe(0);
      const body = JSON.parse(r.stdout) as OtmLocation & { geoReference: { lat: number; lon: number } };
      expect(r.stderr).toContain(`stored ${body.id} (${name}): HTTP 200`);
      expect(r.stderr).toContain(
        `used id ${body.id} (${name}), derived from its name and address: uploading the same location again updates it`,
      );

      // The survey is the average of 30 consecutive epochs the receiver sent, to the digit: the
      // reported position and spread are exactly what averaging those fixes gives.
      const reported = r.stderr.split('\n').find((l) => l.startsWith('averaged '));
      const windows = consecutiveAverages(receiver.written(), SAMPLES).filter(
        (a) => Number(a.lat.toFixed(7)) === body.geoReference.lat && Number(a.lon.toFixed(7)) === body.geoReference.lon,
      );
      expect(windows.length, `no ${SAMPLES} consecutive epochs written average to ${JSON.stringify(body.geoReference)}`).toBeGreaterThan(0);
      expect(windows.map(captureLine)).toContain(reported);
      expect(reported).toMatch(/spread 1\.\d m/);
      // Opposite pairs 1.5 m around the point: 30 consecutive fixes leave at most two unpaired
      // halves (start and end of the window), so the average is within 0.1 m (+ NMEA's 1 cm digits).
      expect(localDistanceM(body.geoReference.lat, body.geoReference.lon, KNOWN_POSITION.lat, KNOWN_POSITION.lon)).toBeLessThan(0.15);

      // What the platform stored.
      expect(sim.locations.size).toBe(1);
      const stored = sim.locations.get(body.id);
      expect(stored).toMatchObject({ version: 1, coordinate: { lat: body.geoReference.lat, lon: body.geoReference.lon, source: 'given' } });
      expect(stored?.location).toMatchObject({
        type: 'warehouse',
        administrativeReference: {
          name,
          street: 'Valutaboulevard',
          houseNumber: '16',
          postalCode: '3825BT',
          city: 'Amersfoort',
          country: 'NL',
        },
      });
      // The CLI used the daemon's token pair from the shared database: no second password grant.
      expect(sim.stats).toMatchObject({ passwordGrants: 1, refreshReuses: 0, invalidLocations: 0 });

      await expectDaemonUndisturbed(e2e, before);
      expect(receiver.error()).toBeUndefined();
      expect(sim.stats.passwordGrants).toBe(1);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    '--source receiver is refused while the daemon holds the port; --dry-run from the daemon prints a valid OTM5 location and sends nothing',
    async () => {
      const e2e = await daemonWithReceiver();
      const { sim, urls, socket, configFile, pty, receiver } = e2e;
      const before = await requestSnapshot(socket, 5000);

      const refused = await runCli(
        ['location', 'here', '--config', configFile, '--name', 'Yard', '--type', 'warehouse', '--source', 'receiver'],
        { timeoutMs: CLI_TIMEOUT_MS },
      );
      expect(refused.stderr).toContain(
        `the running daemon holds the receiver ${pty.device}: a second reader would split its data between the two; use --source daemon (or auto), or stop the daemon first`,
      );
      expect(refused.stderr).not.toContain('sampling');
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stdout).toBe('');

      const name = 'Depot Amersfoort';
      const dry = await runCli(
        [
          'location',
          'here',
          '--config',
          configFile,
          '--dry-run',
          '--name',
          name,
          '--type',
          'warehouse',
          '--street',
          'Valutaboulevard',
          '--house-number',
          '16',
          '--postal-code',
          '3825BT',
          '--city',
          'Amersfoort',
          '--country',
          'NL',
          '--phone',
          '+31 33 123 4567',
        ],
        { timeoutMs: CLI_TIMEOUT_MS },
      );
      expect(dry.stderr).toContain(`sampling ${SAMPLES} fixes from the running daemon (${socket}) ...`);
      expect(dry.code, dry.stderr).toBe(0);
      expect(dry.stderr).toContain(`dry run: would send 1 request PUT ${urls.planningUrl}`);
      const body = JSON.parse(dry.stdout) as OtmLocation & { geoReference: { lat: number; lon: number } };
      expect(body).toMatchObject({
        entityType: 'location',
        name,
        type: 'warehouse',
        geoReference: { type: 'latLonPointGeoReference' },
        administrativeReference: {
          name,
          street: 'Valutaboulevard',
          houseNumber: '16',
          postalCode: '3825BT',
          city: 'Amersfoort',
          country: 'NL',
        },
        contactDetails: [{ type: 'phone', value: '+31 33 123 4567' }],
      });
      expect(localDistanceM(body.geoReference.lat, body.geoReference.lon, KNOWN_POSITION.lat, KNOWN_POSITION.lon)).toBeLessThan(0.15);
      // loadOtmSchemas printed a notice if the shared test data is absent (CI always has it).
      if (otm) expect(otm.validate('location', body)).toEqual([]);

      expect(sim.stats.requests.locations).toBe(0);
      expect(sim.locations.size).toBe(0);
      expect(sim.stats.passwordGrants).toBe(1);
      await expectDaemonUndisturbed(e2e, before);
      expect(receiver.error()).toBeUndefined();
    },
    TEST_TIMEOUT_MS,
  );
});
