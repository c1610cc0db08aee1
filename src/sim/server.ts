import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { systemClock, type Clock } from '../system/clock.js';
import { handleAdmin } from './admin.js';
import { SimListener, type SimStartOptions } from './listener.js';
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
  /** expires_in of access tokens; default 3600 (platform contract, Tokens). */
  accessTtlS?: number;
  /** Refresh token lifetime; default 86400 (docs/platform-contract.md). */
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
   * platform honours the preference is not documented (docs/platform-contract.md).
   */
  honourPreferMinimal?: boolean;
  /** Take startMovingEvent, stopMovingEvent, startEngineEvent, stopEngineEvent; default true (false: 400 naming eventType). */
  vehicleEvents?: boolean;
}

export type { SimStartOptions, SimTlsOptions } from './listener.js';

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
 * A faithful loopback stand-in for the platform (docs/platform-contract.md), in-process
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
  readonly #listener: SimListener;
  #urls: SimUrls | undefined;
  #stopping = new AbortController();

  constructor(options: PlatformSimulatorOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    this.#stats = emptyStats();
    this.#listener = new SimListener(this.#stats);
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
      ...(options.vehicleEvents !== undefined ? { vehicleEvents: options.vehicleEvents } : {}),
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
    const port = await this.#listener.listen(handler, options);
    const base = `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`;
    this.#urls = { authUrl: `${base}${AUTH_BASE}`, deviceUrl: `${base}${DEVICE_BASE}`, planningUrl: base, adminUrl: `${base}/_sim`, port };
    return this.#urls;
  }

  async stop(): Promise<void> {
    if (!this.#urls) return;
    this.#urls = undefined;
    this.#stopping.abort();
    await this.#listener.close();
  }

  /**
   * GOAWAY on every HTTP/2 connection (a server restart or a load balancer draining): streams in
   * flight up to the last one the server accepted are still answered; the client must reconnect
   * for anything later. Returns how many sessions were told.
   */
  goAway(): number {
    return this.#listener.goAway();
  }

  /** Cuts every connection now, answers in flight included (a dead radio link, a NAT that forgot us). */
  dropConnections(): number {
    return this.#listener.dropConnections();
  }

  /** Serves another certificate to new TLS connections (an expired one, then a renewed one: docs/decisions/wrong-clock.md). */
  setCertificate(tls: { key: string | Buffer; cert: string | Buffer }): void {
    this.#listener.setCertificate(tls);
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

  /** Movement and engine events by id, in order of first arrival (not in `events`). */
  get vehicleEvents(): ReadonlyMap<string, ReceivedEvent> {
    return this.#planning.vehicleEvents;
  }

  /** Whether vehicle events are taken (false: refused with 400 naming eventType, as a platform that does not know them). */
  setVehicleEvents(accepted: boolean): void {
    this.#planning.vehicleEventsAccepted = accepted;
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

  /** Every refresh token is expired now: the next refresh answers 401 (platform contract, Tokens, last row). */
  expireRefreshTokens(): void {
    this.#tokens.expireRefreshTokens();
  }

  /** Every token the token service issued (tests search logs and files for them). */
  issuedTokens(): string[] {
    return this.#tokens.issuedTokens();
  }

  /** Makes the next successful token answers hostile; undefined clears. */
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
      sendReply(res, handleAdmin(this, method, url.pathname, body, url.searchParams));
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
      // The platform's queue: wait for the service, or be turned away at once.
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
