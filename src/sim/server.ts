import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createSecureServer, type Http2SecureServer, type ServerHttp2Session } from 'node:http2';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import { systemClock, type Clock } from '../system/clock.js';
import { handleAdmin } from './admin.js';
import { SimDeviceService, type SimDevice } from './devices.js';
import { Faults, isRouteName, type FaultSpec, type RouteName } from './faults.js';
import { CapacityModel, type CapacitySpec } from './capacity.js';
import { bearerOf, json, parseForm, parseJson, readBody, RequestTooLarge, sendReply, type Reply } from './http-io.js';
import { SimPlanningService, type ReceivedEvent, type StoredLocation } from './planning.js';
import { seededRandom } from './random.js';
import { AUTH_BASE, DEVICE_BASE, isServiceRoute, matchRoute, type Match } from './routes.js';
import { emptyStats, type SimStats } from './stats.js';
import { SimTokenService, type SimUser, type TokenAnswerFault } from './tokens.js';
import { dropConnection, refuseStream, echoReply, eventIdOf, faultReply, paddedReply, refusedEventField, unauthorized } from './replies.js';

export interface PlatformSimulatorOptions {
  /** Accounts; default one user `agent` / `agent-password`. */
  users?: SimUser[];
  /** expires_in of access tokens; default 3600 (spec 2.1). */
  accessTtlS?: number;
  /** Refresh token lifetime; default 86400 (platform-notes.md). */
  refreshTtlS?: number;
  /** Fraction of access tokens that expire early; default 0. */
  earlyExpiryFraction?: number;
  /** Absolute session lifetime from the password grant; default unlimited. */
  sessionMaxS?: number;
  /** Token lifetimes run on this clock (a ManualClock in tests); default the system clock. */
  clock?: Clock;
  /** Seed of the fault and early-expiry decisions; default 1. */
  seed?: number;
  /** Spelling of the device UUID field in answers; default deviceUUID. */
  uuidFieldName?: string;
  /**
   * Answer an event PUT that asks for `Prefer: return=minimal` with 204 and no body. Default
   * false: the event is echoed in a 200, as the generic OTM5 API documents, because whether the
   * platform honours the preference is not documented (platform-notes.md; issue 21).
   */
  honourPreferMinimal?: boolean;
}

/**
 * The simulator behind TLS, as the platform is reached in the field: `h2` offers HTTP/2 and
 * HTTP/1.1 in ALPN (node:http2 with allowHTTP1), `http/1.1` offers HTTP/1.1 only. The key and
 * certificate are the caller's (tests make a throwaway CA at run time: test/helpers/tls.ts).
 */
export interface SimTlsOptions {
  key: string | Buffer;
  cert: string | Buffer;
  protocols: 'h2' | 'http/1.1';
  /**
   * Lifetime of the session tickets the server issues, seconds (node's `sessionTimeout`; default
   * 300, node's and nginx's). A ticket is good this long from the full handshake that issued it:
   * like OpenSSL servers with stateless tickets, the simulator issues none on a resumption.
   */
  ticketLifetimeS?: number;
  /**
   * The key the tickets are sealed with (48 bytes, node's `ticketKeys`); default a random one per
   * start. Stable across every connection of one start either way; pass the same key to a restarted
   * simulator to have it accept the tickets of the previous one, as a load balancer fleet sharing
   * its ticket keys does.
   */
  ticketKeys?: Buffer;
}

export interface SimStartOptions {
  port?: number;
  tls?: SimTlsOptions;
  /**
   * Close a connection after this long without a request (HTTP/1.1 keep-alive, announced in
   * `Keep-Alive: timeout=`; HTTP/2 session idle timeout, then GOAWAY). Default 5000, as gateways
   * in front of real services often have.
   */
  idleTimeoutMs?: number;
}

export interface SimUrls {
  /** Token service base (ends in /api/v1). */
  authUrl: string;
  /** Tracking device service base (ends in /api/public/v2/). */
  deviceUrl: string;
  /** Planning host (events and locations). */
  planningUrl: string;
  /** Observation and fault injection: GET stats, POST faults (see admin.ts). */
  adminUrl: string;
  port: number;
}

export type RequestListener = (route: RouteName, status: number | 'dropped') => void;

/**
 * A faithful loopback stand-in for the platform (platform-spec.md, platform-notes.md), in-process
 * for tests and as `telematics-agent sim` for the demo and integrators. Binds 127.0.0.1 only.
 */
export class PlatformSimulator {
  readonly faults: Faults;
  readonly #stats: SimStats;
  readonly #clock: Clock;
  readonly #tokens: SimTokenService;
  readonly #devices: SimDeviceService;
  readonly #planning: SimPlanningService;
  readonly #listeners = new Set<RequestListener>();
  readonly #capacity = new Map<RouteName, CapacityModel>();
  #server: Server | Http2SecureServer | undefined;
  readonly #sockets = new Set<Socket>();
  readonly #sessions = new Set<ServerHttp2Session>();
  #urls: SimUrls | undefined;
  #stopping = new AbortController();

  constructor(options: PlatformSimulatorOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    this.#stats = emptyStats();
    const random = seededRandom(options.seed ?? 1);
    this.faults = new Faults(random);
    this.#tokens = new SimTokenService({
      users: options.users ?? [{ username: 'agent', password: 'agent-password' }],
      accessTtlS: options.accessTtlS ?? 3600,
      refreshTtlS: options.refreshTtlS ?? 86_400,
      earlyExpiryFraction: options.earlyExpiryFraction ?? 0,
      ...(options.sessionMaxS !== undefined ? { sessionMaxS: options.sessionMaxS } : {}),
      clock: this.#clock,
      random,
      stats: this.#stats,
    });
    this.#devices = new SimDeviceService({
      clock: this.#clock,
      stats: this.#stats,
      ...(options.uuidFieldName ? { uuidFieldName: options.uuidFieldName } : {}),
    });
    this.#planning = new SimPlanningService({
      clock: this.#clock,
      stats: this.#stats,
      ...(options.honourPreferMinimal !== undefined ? { honourPreferMinimal: options.honourPreferMinimal } : {}),
    });
  }

  async start(options: SimStartOptions = {}): Promise<SimUrls> {
    if (this.#urls) return this.#urls;
    this.#stopping = new AbortController();
    const handler = (req: IncomingMessage, res: ServerResponse): void => {
      this.#handle(req, res).catch((e: unknown) => {
        if (!res.headersSent) sendReply(res, json(500, `simulator error: ${(e as Error).message}`));
        else res.destroy();
      });
    };
    const idleMs = options.idleTimeoutMs ?? 5000;
    let server: Server | Http2SecureServer;
    const tls = options.tls;
    const tickets = {
      ...(tls?.ticketLifetimeS !== undefined ? { sessionTimeout: tls.ticketLifetimeS } : {}),
      ...(tls?.ticketKeys ? { ticketKeys: tls.ticketKeys } : {}),
    };
    if (tls?.protocols === 'h2') {
      const h2 = createSecureServer({ key: tls.key, cert: tls.cert, allowHTTP1: true, ...tickets }, handler as never);
      // An idle HTTP/2 session ends with GOAWAY, as a load balancer's idle timeout does.
      h2.setTimeout(idleMs);
      h2.on('session', (session: ServerHttp2Session) => {
        this.#sessions.add(session);
        session.once('close', () => this.#sessions.delete(session));
      });
      server = h2;
    } else {
      const h1 = tls
        ? createHttpsServer({ key: tls.key, cert: tls.cert, ALPNProtocols: ['http/1.1'], ...tickets }, handler)
        : createServer(handler);
      // Short keep-alive, as gateways in front of real services have; clients must cope with it.
      h1.keepAliveTimeout = idleMs;
      server = h1;
    }
    server.on(tls ? 'secureConnection' : 'connection', (socket: Socket) => {
      this.#sockets.add(socket);
      this.#stats.connections.opened += 1;
      if ((socket as TLSSocket).alpnProtocol === 'h2') this.#stats.connections.h2 += 1;
      else this.#stats.connections.http1 += 1;
      socket.once('close', () => this.#sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.#server = server;
    const port = (server.address() as AddressInfo).port;
    const base = `${tls ? 'https' : 'http'}://127.0.0.1:${port}`;
    this.#urls = { authUrl: `${base}${AUTH_BASE}`, deviceUrl: `${base}${DEVICE_BASE}`, planningUrl: base, adminUrl: `${base}/_sim`, port };
    return this.#urls;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    this.#server = undefined;
    this.#urls = undefined;
    this.#stopping.abort();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const session of this.#sessions) session.destroy();
    for (const socket of this.#sockets) socket.destroy();
    await closed;
  }

  /**
   * GOAWAY on every HTTP/2 connection (a server restart or a load balancer draining): streams in
   * flight up to the last one the server accepted are still answered; the client must reconnect
   * for anything later. Returns how many sessions were told.
   */
  goAway(): number {
    let n = 0;
    for (const session of this.#sessions) {
      if (session.closed || session.destroyed) continue;
      session.goaway();
      session.close();
      n++;
    }
    return n;
  }

  /** Cuts every connection now, answers in flight included (a dead radio link, a NAT that forgot us). */
  dropConnections(): number {
    const n = this.#sockets.size;
    for (const session of this.#sessions) session.destroy();
    for (const socket of this.#sockets) socket.destroy();
    return n;
  }

  get urls(): SimUrls | undefined {
    return this.#urls;
  }

  /** A snapshot of the counters. */
  get stats(): SimStats {
    const capacity = Object.fromEntries([...this.#capacity].map(([r, m]) => [r, { ...m.spec, ...m.counters }]));
    return structuredClone({ ...this.#stats, faults: { ...this.faults.fired }, capacity });
  }

  /** Received events by id, in order of first arrival (duplicates counted in `deliveries`). */
  get events(): ReadonlyMap<string, ReceivedEvent> {
    return this.#planning.events;
  }

  get locations(): ReadonlyMap<string, StoredLocation> {
    return this.#planning.locations;
  }

  get devices(): SimDevice[] {
    return this.#devices.all;
  }

  setFaults(route: RouteName, spec: FaultSpec | undefined): void {
    this.faults.set(route, spec);
  }

  /**
   * Limits what `route` serves (capacity.ts): a queue served at spec.ratePerS, 429 or 503 past its
   * bound; undefined: unlimited again (the default). Counters in stats.capacity.
   */
  setCapacity(route: RouteName, spec: CapacitySpec | undefined): void {
    if (!isRouteName(route)) throw new Error(`unknown route "${route}"`);
    if (spec) this.#capacity.set(route, new CapacityModel(spec));
    else this.#capacity.delete(route);
  }

  /** Every access token stops working now (as a platform restart or key rotation would do). */
  expireAccessTokens(): void {
    this.#tokens.expireAccessTokens();
  }

  /** Every refresh token is expired now: the next refresh answers 401 (spec 3, last row). */
  expireRefreshTokens(): void {
    this.#tokens.expireRefreshTokens();
  }

  /** Every token the token service issued (tests search logs and files for them). */
  issuedTokens(): string[] {
    return this.#tokens.issuedTokens();
  }

  /** Makes the next successful token answers hostile (issue 11.4); undefined clears. */
  setTokenAnswerFault(fault: TokenAnswerFault | undefined): void {
    this.#tokens.setAnswerFault(fault);
  }

  get tokenAnswerFault(): TokenAnswerFault | undefined {
    return this.#tokens.answerFault;
  }

  setUser(user: SimUser): void {
    this.#tokens.setUser(user);
  }

  /** Called after each request was answered or dropped (tests wait on it instead of sleeping). */
  onRequest(listener: RequestListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = req.method ?? 'GET';
    if (url.pathname.startsWith('/_sim/') || url.pathname === '/_sim') {
      const body = await readBody(req);
      sendReply(res, handleAdmin(this, method, url.pathname, body));
      return;
    }
    const matched = matchRoute(method, url.pathname);
    if (!matched.ok) {
      await readBody(req).catch(() => '');
      sendReply(
        res,
        json(
          matched.status,
          { status: matched.status, error: matched.status === 404 ? 'Not Found' : 'Method Not Allowed', path: url.pathname },
          matched.allow ? { allow: matched.allow } : {},
        ),
      );
      return;
    }
    const { match } = matched;
    const route = match.route;
    this.#stats.requests[route] += 1;
    let body: string;
    try {
      body = await readBody(req);
    } catch (e) {
      if (!(e instanceof RequestTooLarge)) throw e;
      sendReply(res, json(413, { status: 413, error: 'Payload Too Large' }, { connection: 'close' }));
      return;
    }
    const capacity = this.#capacity.get(route);
    if (capacity) {
      // The platform's queue (issue 20): wait for the service, or be turned away at once.
      const admission = capacity.admit(performance.now());
      if (admission.kind === 'reject') {
        const retryAfter = admission.retryAfterS !== undefined ? { 'retry-after': String(admission.retryAfterS) } : undefined;
        this.#notify(route, admission.status);
        sendReply(res, json(admission.status, { status: admission.status, error: 'over capacity' }, retryAfter));
        return;
      }
      try {
        await sleep(admission.waitMs, undefined, { signal: this.#stopping.signal });
      } catch {
        res.destroy();
        return;
      }
    }
    const decision = this.faults.decide(route, isServiceRoute(route));
    if (decision.action.kind === 'resetStream' || decision.action.kind === 'goAway') {
      refuseStream(req, decision.action.kind, decision.action.code);
      this.#notify(route, 'dropped');
      return;
    }
    if (decision.action.kind === 'drop') {
      // The whole connection, with every other stream in flight on it when it is HTTP/2.
      dropConnection(req);
      this.#notify(route, 'dropped');
      return;
    }
    let reply: Reply;
    if (decision.action.kind === 'status') reply = faultReply(decision.action.status, decision.action.retryAfterS);
    else if (decision.action.kind === 'html')
      reply = {
        status: 200,
        raw: { contentType: 'text/html; charset=utf-8', text: '<!doctype html><html><body><h1>Sign in to the network</h1></body></html>' },
      };
    else if (decision.action.kind === 'echo') reply = echoReply(req, body, decision.action.status, decision.action.format);
    else if (route === 'events' && this.faults.rejectsEvent(eventIdOf(body))) reply = json(400, [refusedEventField()]);
    else reply = this.#serve(req, match, body);
    if (decision.padToBytes !== undefined && reply.status >= 200 && reply.status < 300) reply = paddedReply(reply, decision.padToBytes);
    if (decision.action.kind === 'dropAnswer') {
      req.socket.destroy();
      this.#notify(route, 'dropped');
      return;
    }
    if (reply.status === 401 && isServiceRoute(route)) this.#stats.unauthorized += 1;
    this.#notify(route, reply.status);
    if (decision.latencyMs > 0) {
      try {
        await sleep(decision.latencyMs, undefined, { signal: this.#stopping.signal });
      } catch {
        res.destroy();
        return;
      }
    }
    sendReply(res, reply, decision.dripMs);
  }

  #serve(req: IncomingMessage, match: Match, body: string): Reply {
    if (match.op === 'token') {
      const form = parseForm(req, body);
      if (!form)
        return json(400, { error: 'invalid_request', error_description: 'Content-Type must be application/x-www-form-urlencoded' });
      return match.route === 'auth.password' ? this.#tokens.password(form) : this.#tokens.refresh(form);
    }
    const user = this.#tokens.authenticate(bearerOf(req));
    if (!user) return unauthorized();
    switch (match.op) {
      case 'upsert': {
        const parsed = parseJson(body);
        if (!parsed.ok) return json(400, { status: 400, error: 'Bad Request', message: `body is not valid JSON: ${parsed.message}` });
        return this.#devices.upsert(user, parsed.value);
      }
      case 'list':
        return this.#devices.list(user);
      case 'byExternalId':
        return this.#devices.byExternalId(user, match.externalSystemId, match.externalDeviceId);
      case 'byLicensePlate':
        return this.#devices.byLicensePlate(user, match.externalSystemId, match.licensePlate);
      case 'put':
        return match.route === 'events'
          ? this.#planning.putEvent(user.username, parseJson(body), req.headers.prefer)
          : this.#planning.putLocation(parseJson(body));
    }
  }

  #notify(route: RouteName, status: number | 'dropped'): void {
    for (const l of this.#listeners) l(route, status);
  }
}
