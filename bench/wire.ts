/**
 * bench:wire (issue 16.6): what a vehicle's platform traffic costs on the SIM, measured over TLS
 * with real sockets and counted at the agent's TCP socket (handshakes, TLS records, h2 frames
 * included; IP/TCP headers are not visible to a process and not counted).
 *
 * - The platform simulator behind TLS (a throwaway CA, trusted through platform.caFile) offering
 *   h2 + HTTP/1.1 in ALPN, or HTTP/1.1 only; idle connections closed by the server after 60 s (an
 *   AWS ALB's default).
 * - The agent's real parts: outbox (SQLite), uploader, token manager, requester, dispatcher.
 * - A synthetic drive (`telematics-agent drive`: city, depot stop, highway) through the real GNSS
 *   pipeline and recording policy at the configuration defaults (whatever main has), then replayed
 *   into the outbox at its GNSS times, accelerated. Every timer that decides a connection's life is
 *   scaled by the same factor ("the agent's timers honest"): the agent's idle timeout and pings,
 *   the server's idle timeout, the commit interval and the access token lifetime.
 * - Before: HTTP/1.1 with today's transport settings (undici Agent, 4 s idle, no h2), as a baseline
 *   in the same process. After: the platform dispatcher at its defaults.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http2 from 'node:http2';
import net, { type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { rootCertificates, type TLSSocket } from 'node:tls';
import { readFileSync } from 'node:fs';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { configSchema } from '../src/config/schema.js';
import type { RecordedFix } from '../src/gnss/fix.js';
import { GnssPipeline } from '../src/gnss/pipeline.js';
import type { NmeaSource } from '../src/gnss/sources/source.js';
import { silentLogger } from '../src/log.js';
import { AuthorizedClient } from '../src/platform/authorized-client.js';
import { createPlatformConnector, TlsSessionCache } from '../src/platform/connector.js';
import { createPlatformDispatcher, type PlatformTransport } from '../src/platform/dispatcher.js';
import { PlatformHttp } from '../src/platform/http.js';
import { WireCounter, type WireSnapshot } from '../src/platform/wire-counter.js';
import { PlatformSimulator } from '../src/sim/index.js';
import { driveText, generateDrive } from '../src/sim/receiver/index.js';
import { makeThrowawayCa, type ThrowawayCa } from '../src/sim/throwaway-ca.js';
import { openDatabase } from '../src/store/database.js';
import { systemClock } from '../src/system/clock.js';
import { Uploader } from '../src/upload/uploader.js';
import { benchTokenManager, openOutbox, registered } from './upload-rig.js';

const DRIVE_MINUTES = Number(process.env.WIRE_DRIVE_MINUTES ?? 60);
/** Drive replay speed-up; every connection timer is scaled by it. */
const DRIVE_SPEEDUP = Number(process.env.WIRE_DRIVE_SPEEDUP ?? 90);
const PARKED_SPEEDUP = Number(process.env.WIRE_PARKED_SPEEDUP ?? 300);
const SERVER_IDLE_S = 60;
const HOURS_DRIVING_PER_MONTH = 10 * 22;
const HOURS_PARKED_PER_MONTH = 730 - HOURS_DRIVING_PER_MONTH;
const config = configSchema.parse({
  platform: { deviceUrl: 'https://127.0.0.1/api/public/v2/' },
  credentials: { username: 'agent', password: 'pw' },
  device: { externalSystemId: 'bench-fleet', carrierCode: 'BENCH' },
  gnss: { replayFile: '/dev/null' },
});
const DEFAULT_IDLE_S = config.platform.idleTimeoutS ?? Math.ceil(config.recording.maxIntervalS) + 15;

type Transport = 'before' | 'after';
type ServerMode = 'h2' | 'http/1.1';

interface Scenario {
  name: string;
  transport: Transport;
  server: ServerMode;
  /** Scaled: real ms = agent ms / speedup. */
  speedup: number;
  /** After only: HTTP/2 PING interval (agent seconds), 0 none. */
  pingS?: number;
}

interface RunResult {
  wire: WireSnapshot;
  events: number;
  refreshes: number;
  /** Sum of request bodies and answer bodies (plaintext, application level). */
  reqBody: number;
  ansBody: number;
  requests: number;
}

const tmp = mkdtempSync(path.join(os.tmpdir(), 'ta-wire-'));
const ca = makeThrowawayCa(tmp);

/** The transport of today's agent (before issue 16): undici Agent, HTTP/1.1, 4 s idle, undici's connector. */
function beforeTransport(ca: ThrowawayCa, wire: WireCounter, speedup: number): Agent {
  const inner = buildConnector({
    timeout: 10_000,
    rejectUnauthorized: true,
    ca: [...rootCertificates, readFileSync(ca.caFile, 'utf8')],
  });
  // Counted at the TCP socket too: undici's connector runs TLS over a socket it is handed (httpSocket).
  const connect = ((params: { hostname: string; port: string }, cb: (e: Error | null, s: Socket | null) => void) => {
    const tcp = net.connect({ host: params.hostname, port: Number(params.port) });
    // undici's connector returns the socket it made (its typings say void).
    const tls = inner(
      { ...params, httpSocket: tcp } as unknown as buildConnector.Options,
      cb as buildConnector.Callback,
    ) as unknown as TLSSocket;
    wire.track(tcp, tls);
    tls.once('secureConnect', () => wire.negotiated('before', 'http/1.1', tls.isSessionReused()));
    return tls;
  }) as unknown as buildConnector.connector;
  return new Agent({
    connections: config.platform.maxConnections,
    keepAliveTimeout: Math.round(4000 / speedup),
    keepAliveMaxTimeout: Math.round(30_000 / speedup),
    connect,
  });
}

/** Counts request and answer bodies at the application level, to split heads from bodies. */
class BodyMeter implements PlatformTransport {
  reqBody = 0;
  ansBody = 0;
  requests = 0;
  constructor(readonly inner: PlatformTransport) {}
  dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    this.requests++;
    if (typeof options.body === 'string') this.reqBody += Buffer.byteLength(options.body);
    const meter = this;
    const wrapped: Dispatcher.DispatchHandler = {
      onRequestStart: (c, ctx) => handler.onRequestStart?.(c, ctx),
      onResponseStart: (c, s, h, m) => handler.onResponseStart?.(c, s, h, m),
      onResponseData: (c, chunk) => {
        meter.ansBody += chunk.length;
        handler.onResponseData?.(c, chunk);
      },
      onResponseEnd: (c, t) => handler.onResponseEnd?.(c, t),
      onResponseError: (c, e) => handler.onResponseError?.(c, e),
    };
    return this.inner.dispatch(options, wrapped);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

interface Rig {
  sim: PlatformSimulator;
  wire: WireCounter;
  meter: BodyMeter;
  record(fix: RecordedFix): void;
  delivered(): number;
  drained(): Promise<void>;
  close(): Promise<void>;
}

async function rig(s: Scenario): Promise<Rig> {
  const sim = new PlatformSimulator({
    users: [{ username: 'agent', password: 'pw' }],
    accessTtlS: Math.max(4, Math.round(3600 / s.speedup)),
  });
  const urls = await sim.start({
    tls: { key: ca.key, cert: ca.cert, protocols: s.server },
    idleTimeoutMs: Math.round((SERVER_IDLE_S * 1000) / s.speedup),
  });
  const wire = new WireCounter();
  const transport =
    s.transport === 'before'
      ? beforeTransport(ca, wire, s.speedup)
      : createPlatformDispatcher({
          caFile: ca.caFile,
          maxConnections: config.platform.maxConnections,
          requestTimeoutMs: config.platform.requestTimeoutMs,
          http2: config.platform.http2,
          idleTimeoutMs: Math.round((DEFAULT_IDLE_S * 1000) / s.speedup),
          pingIntervalMs: Math.round(((s.pingS ?? config.platform.pingIntervalS) * 1000) / s.speedup),
          wire,
        });
  const meter = new BodyMeter(transport);
  const http = new PlatformHttp({
    dispatcher: meter,
    requestTimeoutMs: 30_000,
    maxResponseBytes: 1 << 20,
  });
  const dir = mkdtempSync(path.join(tmp, 'run-'));
  const tokens = benchTokenManager(
    openDatabase({ dataDir: dir, logger: silentLogger() }),
    http,
    urls.authUrl,
    Math.max(100, Math.round(60_000 / s.speedup)),
  );
  await tokens.start();
  const client = new AuthorizedClient({ http, tokens, logger: silentLogger() });
  const { db, outbox } = openOutbox(dir, { commitIntervalMs: Math.max(5, Math.round(1000 / s.speedup)) });
  await outbox.start();
  const uploader = new Uploader({
    queue: outbox,
    requester: client,
    registration: registered,
    eventsUrl: `${urls.planningUrl}${config.platform.eventsPath}`,
    // The backlog pace is per second of real time: scaled with the replay like every other timer.
    upload: { ...config.upload, backlogRatePerS: config.upload.backlogRatePerS * s.speedup },
    clock: systemClock,
    logger: silentLogger(),
  });
  await uploader.start();
  return {
    sim,
    wire,
    meter,
    record: (fix) => outbox.record(fix),
    delivered: () => sim.events.size,
    async drained() {
      const t0 = Date.now();
      while (outbox.pendingCount() > 0 || uploader.status().inFlight > 0) {
        if (Date.now() - t0 > 60_000) throw new Error(`${s.name}: the outbox did not drain`);
        if (Math.floor((Date.now() - t0) / 1000) !== Math.floor((Date.now() - t0 - 10) / 1000)) await sleep(10);
      }
    },
    async close() {
      await uploader.stop(1000);
      await outbox.stop();
      db.close();
      await tokens.stop();
      await transport.close();
      await sim.stop();
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function minus(a: WireSnapshot, b: WireSnapshot): RunResult['wire'] {
  return {
    ...a,
    total: { sent: a.total.sent - b.total.sent, received: a.total.received - b.total.received },
    plaintext: { sent: a.plaintext.sent - b.plaintext.sent, received: a.plaintext.received - b.plaintext.received },
    connections: a.connections - b.connections,
    fullHandshakes: a.fullHandshakes - b.fullHandshakes,
    resumedHandshakes: a.resumedHandshakes - b.resumedHandshakes,
  };
}

/** Replays `fixes` at their GNSS times / speedup after a warm-up event; returns what the schedule cost. */
async function replay(s: Scenario, fixes: RecordedFix[], warm: RecordedFix): Promise<RunResult> {
  const r = await rig(s);
  try {
    r.record(warm);
    await r.drained();
    const w0 = r.wire.snapshot();
    const m0 = { req: r.meter.reqBody, ans: r.meter.ansBody, n: r.meter.requests };
    const refreshes0 = r.sim.stats.refreshes;
    const t0 = performance.now();
    const first = fixes[0]!.time;
    for (const fix of fixes) {
      const due = (fix.time - first) / s.speedup;
      const wait = due - (performance.now() - t0);
      if (wait > 0) await sleep(wait);
      r.record(fix);
    }
    await r.drained();
    // The gap after the last fix belongs to the hour as well (idle close, pings).
    const period = fixes.length > 1 ? (fixes.at(-1)!.time - first) / (fixes.length - 1) : 0;
    await sleep(period / s.speedup);
    await sleep(50);
    const wire = minus(r.wire.snapshot(), w0);
    return {
      wire: wire as WireSnapshot,
      events: fixes.length,
      refreshes: r.sim.stats.refreshes - refreshes0,
      reqBody: r.meter.reqBody - m0.req,
      ansBody: r.meter.ansBody - m0.ans,
      requests: r.meter.requests - m0.n,
    };
  } finally {
    await r.close();
  }
}

/** The drive through the real pipeline and recording policy at the configuration defaults. */
async function recordedDrive(): Promise<{ fixes: RecordedFix[]; hours: number; phases: string }> {
  const drive = generateDrive({ minutes: DRIVE_MINUTES, hz: 1, seed: 7 });
  const fixes: RecordedFix[] = [];
  let listener: ((b: Buffer) => void) | undefined;
  const source: NmeaSource = {
    start: async () => listener?.(Buffer.from(driveText(drive))),
    stop: async () => {},
    onData: (l) => {
      listener = l;
    },
    link: () => ({ status: 'ended', path: 'synthetic', attempts: 0, bytes: 0 }),
  };
  const pipeline = new GnssPipeline({
    source,
    logger: silentLogger(),
    sink: { record: (f) => void fixes.push(f) },
    quality: config.quality,
    recording: config.recording,
  });
  await pipeline.start();
  await pipeline.stop();
  const spans = new Map<string, number>();
  for (const p of drive.phases) spans.set(p.phase, (spans.get(p.phase) ?? 0) + (p.to - p.from));
  const phases = [...spans].map(([k, v]) => `${k} ${(v / 60).toFixed(0)} min`).join(', ');
  return { fixes, hours: drive.epochs / drive.hz / 3600, phases };
}

/** Bytes of one TLS handshake (tickets and close included), full and then resumed, at the TCP socket. */
async function handshakes(server: ServerMode, transport: Transport): Promise<{ full: number; resumed: number; resumedOk: boolean }> {
  const sim = new PlatformSimulator();
  const urls = await sim.start({ tls: { key: ca.key, cert: ca.cert, protocols: server } });
  const cache = new TlsSessionCache();
  const one = async (): Promise<{ bytes: number; reused: boolean }> => {
    const wire = new WireCounter();
    let socket: Socket;
    if (transport === 'after') {
      const connect = createPlatformConnector(
        { ca: [...rootCertificates, readFileSync(ca.caFile, 'utf8')], http2: true, connectTimeoutMs: 5000, idleTimeoutMs: 0, wire },
        cache,
      );
      socket = await new Promise<Socket>((resolve, reject) =>
        connect({ hostname: '127.0.0.1', protocol: 'https:', port: urls.port }, (e, s) => (e ? reject(e) : resolve(s!))),
      );
    } else {
      const agent = beforeTransport(ca, wire, 1);
      await agent.close();
      socket = await new Promise<Socket>((resolve, reject) =>
        beforeConnector(wire)({ hostname: '127.0.0.1', protocol: 'https:', port: String(urls.port) }, (e, s) =>
          e ? reject(e) : resolve(s!),
        ),
      );
    }
    await sleep(100); // session tickets arrive after the handshake
    const reused = (socket as TLSSocket).isSessionReused();
    const closed = new Promise((r) => socket.once('close', r));
    if ((socket as TLSSocket).alpnProtocol === 'h2') {
      // Speak HTTP/2 as undici does (preface, SETTINGS both ways, then close): node:http2 never
      // closes a TLS connection whose peer half-closes before sending the preface, so a bare
      // end() here waited for ever (the "stall" of the first version of this bench).
      const session = http2.connect(`https://127.0.0.1:${urls.port}`, { createConnection: () => socket });
      await new Promise((r) => session.once('remoteSettings', r));
      session.close();
    } else {
      socket.end();
    }
    await closed;
    await sleep(20);
    const w = wire.snapshot().total;
    return { bytes: w.sent + w.received, reused };
  };
  const full = await one();
  const resumed = await one();
  await sim.stop();
  return { full: full.bytes, resumed: resumed.bytes, resumedOk: resumed.reused };
}

let beforeInner: ReturnType<typeof buildConnector> | undefined;
function beforeConnector(
  wire: WireCounter,
): (p: { hostname: string; protocol: string; port: string }, cb: (e: Error | null, s: Socket | null) => void) => Socket {
  beforeInner ??= buildConnector({ timeout: 10_000, rejectUnauthorized: true, ca: [...rootCertificates, readFileSync(ca.caFile, 'utf8')] });
  return (params, cb) => {
    const tcp = net.connect({ host: params.hostname, port: Number(params.port) });
    const tls = beforeInner!(
      { ...params, httpSocket: tcp } as unknown as buildConnector.Options,
      cb as buildConnector.Callback,
    ) as unknown as TLSSocket;
    wire.track(tcp, tls);
    return tls;
  };
}

// ---------------------------------------------------------------------------------------------

const kb = (n: number) => `${(n / 1000).toFixed(1)} KB`;
const mb = (n: number) => `${(n / 1e6).toFixed(2)} MB`;
const started = performance.now();
// undici unrefs idle h2 sessions and sockets, so between two scenarios (a dispatcher closing, the
// next simulator not yet listening) nothing may hold the event loop and node would exit early.
const holdLoop = setInterval(() => {}, 60_000);

console.log(`bench:wire — TLS with real sockets, bytes counted at the agent's TCP socket (IP/TCP headers not included)`);
const { fixes, hours, phases } = await recordedDrive();
console.log(
  `drive: synthetic, ${DRIVE_MINUTES} min (${phases}), ${fixes.length} events recorded at the default recording policy = ${(fixes.length / hours).toFixed(0)} per hour of driving`,
);
console.log(
  `replay: ${DRIVE_SPEEDUP}x (parked hour ${PARKED_SPEEDUP}x), connection timers scaled alike; server idle timeout ${SERVER_IDLE_S} s; agent idle ${DEFAULT_IDLE_S} s (after), 4 s (before)\n`,
);

const warm = { ...fixes[0]!, time: fixes[0]!.time - 60_000 };
const scenarios: Scenario[] = [
  { name: 'before: h1.1, today (h2 offered)', transport: 'before', server: 'h2', speedup: DRIVE_SPEEDUP },
  { name: 'after: h2', transport: 'after', server: 'h2', speedup: DRIVE_SPEEDUP },
  { name: 'after: server h1.1 only', transport: 'after', server: 'http/1.1', speedup: DRIVE_SPEEDUP },
];

interface Row {
  name: string;
  protocol: string;
  perEvent: { reqHead: number; reqBody: number; ansHead: number; ansBody: number; tls: number; up: number; down: number };
  hs: { full: number; resumed: number; resumedOk: boolean };
  drive: RunResult;
  parked: { best: RunResult; label: string; all: { label: string; r: RunResult }[] };
}
const rows: Row[] = [];

for (const s of scenarios.filter((x) => !process.env.WIRE_ONLY || x.transport === process.env.WIRE_ONLY)) {
  // Warm per-event bytes: 30 events one after the other on a warm connection.
  const seq = fixes.slice(1, 31).map((f, i) => ({ ...f, time: fixes[0]!.time + i * 200 }));
  const warmRun = await replay({ ...s, speedup: 1 }, seq, warm);
  const n = warmRun.events;
  const w = warmRun.wire;
  const perEvent = {
    reqBody: warmRun.reqBody / n,
    reqHead: (w.plaintext.sent - warmRun.reqBody) / n,
    ansBody: warmRun.ansBody / n,
    ansHead: (w.plaintext.received - warmRun.ansBody) / n,
    tls: (w.total.sent - w.plaintext.sent + w.total.received - w.plaintext.received) / n,
    up: w.total.sent / n,
    down: w.total.received / n,
  };
  const hs = await handshakes(s.server, s.transport);
  const drive = await replay(s, fixes, warm);
  // Parked hour: one heartbeat every recording.stoppedHeartbeatS.
  const beat = config.recording.stoppedHeartbeatS * 1000;
  const parkedFixes = Array.from({ length: Math.round(3_600_000 / beat) }, (_, i) => ({ ...fixes[0]!, time: fixes[0]!.time + i * beat }));
  const variants: { label: string; pingS?: number }[] =
    s.transport === 'before'
      ? [{ label: 'new connection per heartbeat' }]
      : [
          { label: 'reconnect, resumed TLS', pingS: 0 },
          { label: 'keep, h2 PING 45 s', pingS: 45 },
        ];
  const all: { label: string; r: RunResult }[] = [];
  for (const v of variants) {
    if (s.server === 'http/1.1' && (v.pingS ?? 0) > 0) continue; // PING is an h2 frame
    const r = await replay({ ...s, speedup: PARKED_SPEEDUP, ...(v.pingS !== undefined ? { pingS: v.pingS } : {}) }, parkedFixes, warm);
    all.push({ label: v.label, r });
  }
  const cost = (r: RunResult) => r.wire.total.sent + r.wire.total.received;
  const def =
    all.find((a) => s.transport === 'before' || a.label.startsWith(config.platform.pingIntervalS > 0 ? 'keep' : 'reconnect')) ?? all[0]!;
  rows.push({ name: s.name, protocol: drive.wire.protocol ?? '?', perEvent, hs, drive, parked: { best: def.r, label: def.label, all } });
  void cost;
}

const pad = (s: string, n: number) => s.padEnd(n);
const col = (v: string) => v.padStart(24);
const line = (label: string, f: (r: Row) => string) => console.log(`${pad(label, 44)}${rows.map((r) => col(f(r))).join('')}`);
line('figure', (r) => r.name.split(':')[0] + (r.name.includes('only') ? ' (h1.1 srv)' : ''));
line('protocol negotiated', (r) => r.protocol);
line('bytes per event, warm: request head', (r) => `${r.perEvent.reqHead.toFixed(0)} B`);
line('  request body', (r) => `${r.perEvent.reqBody.toFixed(0)} B`);
line('  answer head', (r) => `${r.perEvent.ansHead.toFixed(0)} B`);
line('  answer body', (r) => `${r.perEvent.ansBody.toFixed(0)} B`);
line('  TLS records', (r) => `${r.perEvent.tls.toFixed(0)} B`);
line(
  '  up + down at the socket (goal <= 800 B)',
  (r) => `${r.perEvent.up.toFixed(0)} + ${r.perEvent.down.toFixed(0)} = ${(r.perEvent.up + r.perEvent.down).toFixed(0)} B`,
);
line('full TLS handshake (tickets, close incl.)', (r) => `${r.hs.full} B`);
line('resumed TLS handshake', (r) => `${r.hs.resumed} B${r.hs.resumedOk ? '' : ' (not resumed)'}`);
line('drive: connections opened', (r) => `${r.drive.wire.connections} (${r.drive.wire.resumedHandshakes} resumed)`);
line('drive: events per hour of driving', (r) => `${(r.drive.events / hours).toFixed(0)}`);
line('drive: token refreshes', (r) => `${r.drive.refreshes}`);
line(
  'drive: bytes per event (all in)',
  (r) => `${((r.drive.wire.total.sent + r.drive.wire.total.received) / r.drive.events).toFixed(0)} B`,
);
const perHour = (r: Row) => (r.drive.wire.total.sent + r.drive.wire.total.received) / hours;
line('MB per hour of driving', (r) => mb(perHour(r)));
line(`month driving (10 h x 22 d; goal <= 50 MB)`, (r) => mb(perHour(r) * HOURS_DRIVING_PER_MONTH));
const parkedHour = (r: Row) => r.parked.best.wire.total.sent + r.parked.best.wire.total.received;
line('parked hour (goal <= 10 KB)', (r) => kb(parkedHour(r)));
line(`  parked month (${HOURS_PARKED_PER_MONTH} h, on top)`, (r) => mb(parkedHour(r) * HOURS_PARKED_PER_MONTH));
console.log('\nparked hour, each way of spending it (12 heartbeats, server idle 60 s):');
for (const r of rows)
  for (const a of r.parked.all)
    console.log(
      `  ${pad(r.name, 36)} ${pad(a.label, 28)} ${kb(a.r.wire.total.sent + a.r.wire.total.received).padStart(9)}  connections ${a.r.wire.connections}, token refreshes ${a.r.refreshes}`,
    );
const before = rows[0]!;
const after = rows[1]!;
console.log(
  `\nafter/before: per event warm ${((after.perEvent.up + after.perEvent.down) / (before.perEvent.up + before.perEvent.down)).toFixed(2)}x, per driving hour ${(perHour(after) / perHour(before)).toFixed(2)}x, parked hour ${(parkedHour(after) / parkedHour(before)).toFixed(2)}x`,
);
console.log(`(${((performance.now() - started) / 1000).toFixed(0)} s)`);
rmSync(tmp, { recursive: true, force: true });
clearInterval(holdLoop);
