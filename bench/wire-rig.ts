/** bench:wire's parts: the simulator behind TLS, the agent's real upload path, the old transport, the drive. */ import { mkdtempSync } from 'node:fs';
import http2 from 'node:http2';
import net, { type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { rootCertificates, type TLSSocket } from 'node:tls';
import { readFileSync } from 'node:fs';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { configSchemas } from '../src/config/schema.js';
import type { RecordedFix } from '../src/fix/fix.js';
import { GnssPipeline } from '../src/gnss/pipeline.js';
import type { NmeaSource } from '../src/gnss/sources/source.js';
import { silentLogger } from '../src/log.js';
import { AuthorizedClient } from '../src/platform/auth/authorized-client.js';
import { createPlatformConnector, TlsSessionCache } from '../src/platform/transport/connector.js';
import { createPlatformDispatcher, PING_INTERVAL_S, type PlatformTransport } from '../src/platform/transport/dispatcher.js';
import { PlatformHttp } from '../src/platform/transport/http.js';
import { WireCounter, type WireSnapshot } from '../src/platform/transport/wire-counter.js';
import { PlatformSimulator } from '../src/sim/index.js';
import { describeUrbanRoute, driveText, generateDrive, planUrbanDeliveryRoute } from '../src/sim/receiver/index.js';
import { seededRandom } from '../src/sim/random.js';
import { TokenClient } from '../src/platform/auth/token-client.js';
import { huffmanLength } from '../src/platform/transport/hpack/huffman.js';
import { makePublicLikeChain, makeThrowawayCa, type ThrowawayCa } from '../src/sim/throwaway-ca.js';
import type { TokenManagerTuning } from '../src/platform/auth/token-manager-options.js';
import { openDatabase } from '../src/store/database.js';
import { systemClock } from '../src/system/clock.js';
import { Uploader } from '../src/upload/uploader.js';
import { benchTokenManager, openOutbox, registered } from './upload-rig.js';

export const DRIVE_MINUTES = Number(process.env.WIRE_DRIVE_MINUTES ?? 60);
/** Drive replay speed-up; every connection timer is scaled by it. */
export const DRIVE_SPEEDUP = Number(process.env.WIRE_DRIVE_SPEEDUP ?? 90);
export const PARKED_SPEEDUP = Number(process.env.WIRE_PARKED_SPEEDUP ?? 300);
export const SERVER_IDLE_S = 60;
export const HOURS_DRIVING_PER_MONTH = 10 * 22;
export const HOURS_PARKED_PER_MONTH = 730 - HOURS_DRIVING_PER_MONTH;
export const config = configSchemas().configSchema.parse({
  platform: { deviceUrl: 'https://127.0.0.1/api/public/v2/' },
  credentials: { username: 'agent', password: 'pw' },
  device: { externalSystemId: 'bench-fleet', carrierCode: 'BENCH' },
  gnss: { replayFile: '/dev/null' },
});
export const DEFAULT_IDLE_S = config.platform.idleTimeoutS ?? Math.ceil(config.recording.maxIntervalS) + 15;

export type Transport = 'before' | 'after';
export type ServerMode = 'h2' | 'http/1.1';

export interface Scenario {
  name: string;
  transport: Transport;
  server: ServerMode;
  /** Scaled: real ms = agent ms / speedup. */
  speedup: number;
  /** After only: HTTP/2 PING interval (agent seconds), 0 none. */
  pingS?: number;
  /** Lifetime of the server's TLS session tickets (agent seconds); default TICKET_LIFETIME_S. */
  ticketLifetimeS?: number;
  /** 'demand': no background token refresh, only when a request finds the token due. */
  refresh?: 'background' | 'demand';
  /** After only: false runs h2 without the header indexer (nghttp2 alone: the bearer on every request). */
  indexAuthorization?: boolean;
  /** 'public': the server sends a chain of a public CA's size (makePublicLikeChain); default the one-certificate throwaway CA. */
  chain?: 'public';
  /** false: the server resumes no TLS session (every connection a full handshake). */
  resumption?: boolean;
  /** The token manager's idle renewal, as the daemon sets it (build.ts); default: always ahead. */
  tokenIdle?: Pick<TokenManagerTuning, 'keepFreshS' | 'idleRefreshAgeS'>;
}

/**
 * What the bench assumes of the platform's TLS tickets unless a scenario says otherwise: a day
 * (Cloudflare issues 18 h, Google 28 h; nginx and node default to 300 s, shown separately). Like
 * an OpenSSL server with stateless tickets, the simulator issues no new ticket on a resumption,
 * so a ticket is good this long from the full handshake that issued it.
 */
export const TICKET_LIFETIME_S = Number(process.env.WIRE_TICKET_LIFETIME_S ?? 86_400);

export interface RunResult {
  wire: WireSnapshot;
  events: number;
  refreshes: number;
  /** Sum of request bodies and answer bodies (plaintext, application level). */
  reqBody: number;
  ansBody: number;
  requests: number;
  /** Length of the access token the simulator issued, and of "Bearer <token>" Huffman-coded (HPACK). */
  accessTokenLength: number;
  bearerHuffmanBytes: number;
}

export const tmp = mkdtempSync(path.join(os.tmpdir(), 'ta-wire-'));
export const ca = makeThrowawayCa(tmp);
/** A public CA's chain (leaf + two intermediates, RSA-2048), for the real-terms parked hour. */
export const publicCa = makePublicLikeChain(mkdtempSync(path.join(tmp, 'public-ca-')));

/** The transport before the header indexer: undici Agent, HTTP/1.1, 4 s idle, undici's connector. */
export function beforeTransport(ca: ThrowawayCa, wire: WireCounter, speedup: number): Agent {
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
    const origin = `https://${params.hostname}:${params.port}`;
    wire.track(tcp, tls, origin);
    tls.once('secureConnect', () => wire.negotiated(origin, 'http/1.1', tls.isSessionReused(), tcp.bytesWritten + tcp.bytesRead));
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
export class BodyMeter implements PlatformTransport {
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

export interface Rig {
  sim: PlatformSimulator;
  wire: WireCounter;
  meter: BodyMeter;
  record(fix: RecordedFix): void;
  delivered(): number;
  drained(): Promise<void>;
  close(): Promise<void>;
}

export async function rig(s: Scenario): Promise<Rig> {
  // Token lifetimes honest at any speed-up: the simulator and the token manager both measure them on
  // a monotonic clock that runs `speedup` times faster, so the access token lives its 3600 s (the
  // agent clamps an announced lifetime below 60 s, which a scaled expires_in would have been).
  const t0 = performance.now();
  const fast = { monotonicMs: () => t0 + (performance.now() - t0) * s.speedup, wallMs: () => Date.now() };
  const clocks = { clock: fast, bootClock: { bootId: `bench-${t0}`, nowMs: () => fast.monotonicMs() } };
  const sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'pw' }], accessTtlS: 3600, clock: fast });
  const serverCa = s.chain === 'public' ? publicCa : ca;
  const simUrls = await sim.start({
    tls: {
      key: serverCa.key,
      cert: serverCa.cert,
      protocols: s.server,
      ...(s.resumption === false ? { resumption: false } : {}),
      ticketLifetimeS: Math.max(1, Math.round((s.ticketLifetimeS ?? TICKET_LIFETIME_S) / s.speedup)),
    },
    idleTimeoutMs: Math.round((SERVER_IDLE_S * 1000) / s.speedup),
  });
  // The token service on a host of its own, as in the field (auth-service vs planning-receive-api):
  // 'localhost' is a second origin (own connections, own tickets) on the same simulator.
  const urls = { ...simUrls, authUrl: simUrls.authUrl.replace('127.0.0.1', 'localhost') };
  const wire = new WireCounter();
  const transport =
    s.transport === 'before'
      ? beforeTransport(ca, wire, s.speedup)
      : createPlatformDispatcher({
          caFile: serverCa.caFile,
          maxConnections: config.platform.maxConnections,
          requestTimeoutMs: config.platform.requestTimeoutMs,
          http2: config.platform.http2,
          idleTimeoutMs: Math.round((DEFAULT_IDLE_S * 1000) / s.speedup),
          pingIntervalMs: Math.round(((s.pingS ?? PING_INTERVAL_S) * 1000) / s.speedup),
          wire,
          ...(s.indexAuthorization !== undefined ? { indexAuthorization: s.indexAuthorization } : {}),
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
    s.refresh === 'demand' ? 2 ** 31 - 1 : Math.max(100, Math.round(60_000 / s.speedup)),
    clocks,
    s.tokenIdle,
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
    // The drain adapts to the link; a configured rate ceiling would be per real second.
    upload: config.upload,
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

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function minus(a: WireSnapshot, b: WireSnapshot): RunResult['wire'] {
  return {
    ...a,
    total: { sent: a.total.sent - b.total.sent, received: a.total.received - b.total.received },
    plaintext: { sent: a.plaintext.sent - b.plaintext.sent, received: a.plaintext.received - b.plaintext.received },
    connections: a.connections - b.connections,
    fullHandshakes: a.fullHandshakes - b.fullHandshakes,
    resumedHandshakes: a.resumedHandshakes - b.resumedHandshakes,
    handshakeBytes: { full: a.handshakeBytes.full - b.handshakeBytes.full, resumed: a.handshakeBytes.resumed - b.handshakeBytes.resumed },
    headerBlocks: {
      count: a.headerBlocks.count - b.headerBlocks.count,
      nghttp2Bytes: a.headerBlocks.nghttp2Bytes - b.headerBlocks.nghttp2Bytes,
      sentBytes: a.headerBlocks.sentBytes - b.headerBlocks.sentBytes,
    },
    headerIndexerOff: a.headerIndexerOff.slice(b.headerIndexerOff.length),
    byOrigin: Object.fromEntries(
      Object.entries(a.byOrigin).map(([k, v]) => {
        const o = b.byOrigin[k] ?? { bytes: 0, connections: 0, handshakeBytes: 0 };
        return [
          k,
          { bytes: v.bytes - o.bytes, connections: v.connections - o.connections, handshakeBytes: v.handshakeBytes - o.handshakeBytes },
        ];
      }),
    ),
  };
}

/** Replays `fixes` at their GNSS times / speedup after a warm-up event; returns what the schedule cost. */
export async function replay(s: Scenario, fixes: RecordedFix[], warm: RecordedFix): Promise<RunResult> {
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
      accessTokenLength: r.sim.issuedTokens()[0]?.length ?? 0,
      bearerHuffmanBytes: huffmanLength(Buffer.from(`Bearer ${r.sim.issuedTokens()[0] ?? ''}`, 'latin1')),
    };
  } finally {
    await r.close();
  }
}

/** The drive through the real pipeline and recording policy at the configuration defaults. */
/**
 * The drive the month is projected from: the urban delivery drive (urban-route.ts), or
 * with WIRE_DRIVE=mixed the older city / depot / highway drive of WIRE_DRIVE_MINUTES.
 */
export async function recordedDrive(): Promise<{ fixes: RecordedFix[]; hours: number; phases: string; what: string }> {
  const urban = process.env.WIRE_DRIVE !== 'mixed';
  const legs = urban ? planUrbanDeliveryRoute({ random: seededRandom(7) }) : undefined;
  const drive = generateDrive({ minutes: DRIVE_MINUTES, hz: 1, seed: 7, ...(legs ? { legs } : {}) });
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
  const hours = drive.epochs / drive.hz / 3600;
  const what = legs
    ? `urban delivery drive, ${(hours * 60).toFixed(0)} min: ${describeUrbanRoute(legs)}`
    : `synthetic mixed drive, ${DRIVE_MINUTES} min`;
  return { fixes, hours, phases, what };
}

/** Bytes of one TLS handshake (tickets and close included), full and then resumed, at the TCP socket. */
export async function handshakes(server: ServerMode, transport: Transport): Promise<{ full: number; resumed: number; resumedOk: boolean }> {
  const sim = new PlatformSimulator();
  const urls = await sim.start({ tls: { key: ca.key, cert: ca.cert, protocols: server } });
  const cache = new TlsSessionCache();
  const one = async (): Promise<{ bytes: number; reused: boolean }> => {
    const wire = new WireCounter();
    let socket: Socket;
    if (transport === 'after') {
      const connect = createPlatformConnector(
        // The TLS socket itself (no header indexer): this measures handshakes only.
        {
          ca: [...rootCertificates, readFileSync(ca.caFile, 'utf8')],
          http2: true,
          connectTimeoutMs: 5000,
          wire,
          indexAuthorization: false,
        },
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
export function beforeConnector(
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

/**
 * What one token refresh costs at the TCP socket, both ways: on a connection kept warm, on a new
 * connection with a resumed TLS handshake (the usual case: the token origin is asked once an
 * hour), and with a full handshake. Also the plaintext of the request and answer bodies.
 */
export async function refreshCost(): Promise<{
  warm: number;
  resumed: number;
  full: number;
  up: { body: number };
  down: { body: number; tokens: number };
}> {
  const sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'pw' }] });
  const simUrls = await sim.start({ tls: { key: ca.key, cert: ca.cert, protocols: 'h2' }, idleTimeoutMs: 60_000 });
  const authUrl = simUrls.authUrl.replace('127.0.0.1', 'localhost');
  const sessions = new TlsSessionCache();
  const measure = async (keep: boolean, cache: TlsSessionCache, refreshToken: string) => {
    const wire = new WireCounter();
    const transport = createPlatformDispatcher({
      caFile: ca.caFile,
      maxConnections: 1,
      requestTimeoutMs: 10_000,
      idleTimeoutMs: 60_000,
      wire,
      sessions: cache,
    });
    const meter = new BodyMeter(transport);
    const http = new PlatformHttp({ dispatcher: meter, requestTimeoutMs: 10_000, maxResponseBytes: 1 << 20 });
    const client = new TokenClient({ http, authUrl, clock: systemClock });
    let token = refreshToken;
    if (keep) {
      const warmUp = await client.refresh(token);
      if (warmUp.kind !== 'pair') throw new Error('refresh failed');
      token = warmUp.pair.refreshToken;
    }
    const w0 = wire.snapshot();
    const m0 = { req: meter.reqBody, ans: meter.ansBody };
    const got = await client.refresh(token);
    if (got.kind !== 'pair') throw new Error('refresh failed');
    await transport.close();
    await sleep(50);
    const w = minus(wire.snapshot(), w0);
    return {
      bytes: w.total.sent + w.total.received,
      next: got.pair.refreshToken,
      up: meter.reqBody - m0.req,
      down: meter.ansBody - m0.ans,
    };
  };
  const grantDispatcher = createPlatformDispatcher({ caFile: ca.caFile, maxConnections: 1, requestTimeoutMs: 10_000, sessions });
  const first = await new TokenClient({
    http: new PlatformHttp({ dispatcher: grantDispatcher, requestTimeoutMs: 10_000, maxResponseBytes: 1 << 20 }),
    authUrl,
    clock: systemClock,
  }).password('agent', { reveal: () => 'pw' } as never);
  await grantDispatcher.close();
  if (first.kind !== 'pair') throw new Error('password grant failed');
  const full = await measure(false, new TlsSessionCache(), first.pair.refreshToken);
  const resumed = await measure(false, sessions, full.next);
  const warm = await measure(true, sessions, resumed.next);
  await sim.stop();
  const tokens = 3;
  return { warm: warm.bytes, resumed: resumed.bytes, full: full.bytes, up: { body: warm.up }, down: { body: warm.down, tokens } };
}
