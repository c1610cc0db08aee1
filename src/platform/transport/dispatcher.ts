import { readFileSync } from 'node:fs';
import type { TLSSocket } from 'node:tls';
import { rootCertificates } from 'node:tls';
import type { Client as ClientType, Dispatcher, Pool as PoolType } from 'undici';
// The dispatcher classes alone: undici's index loads fetch, WebSocket, caches and mocks as well,
// about 8 MB of the daemon's resident memory it never uses (measured). A test
// checks that these are the classes `undici` exports, so an upgrade that moves them fails loudly.
import Client from 'undici/lib/dispatcher/client.js';
import Pool from 'undici/lib/dispatcher/pool.js';
import { AgentError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { createPlatformConnector, TlsSessionCache } from './connector.js';
import { DeadSessionRetryHandler } from './dead-session.js';
import { InFlightCounter } from './in-flight-counter.js';
import { DETACHED_CONTROLLER, RetryBeforeAnswerHandler } from './retry-before-answer.js';
import { trustFingerprint } from './tls-session-store.js';
import { WireCounter } from './wire-counter.js';

/**
 * Streams one h2 connection carries at once at most (undici's `pipelining` for h2): as many as the
 * uploader can have in flight (upload.concurrency, both lanes, at most 64), fewer than the 100 a server
 * commonly allows (SETTINGS_MAX_CONCURRENT_STREAMS).
 */
export const H2_STREAMS = 64;

/**
 * The daemon sends no HTTP/2 PING (0): a parked heartbeat reconnects, resuming the TLS session. Over
 * parked hours (bench:wire with WIRE_PARKED_TABLE=1, server idle timeout 60 s, tokens of 250
 * characters) reconnecting cost 5.3 KB an hour, a PING every 45 s 5.6 KB at the 1800 s heartbeat
 * (24.3 vs 24.8 KB at 300 s); an AWS ALB does not count PINGs as traffic, so they only add bytes.
 */
export const PING_INTERVAL_S = 0;

export interface PlatformDispatcherOptions {
  /** platform.caFile: an extra CA (PEM) trusted besides the system's roots. */
  caFile?: string;
  /** platform.maxConnections: connections per origin when the server speaks HTTP/1.1 only. */
  maxConnections: number;
  /** platform.requestTimeoutMs: also bounds connecting, headers and the gap between body chunks. */
  requestTimeoutMs: number;
  /** platform.http2: offer HTTP/2 in ALPN (default true). */
  http2?: boolean;
  /**
   * Close a connection after this long without traffic (default 4000, the old fixed value). The
   * agent passes the recording policy's longest moving interval plus a margin, so that the
   * connection lasts across the gaps between events while driving. HTTP/1.1: a shorter
   * `Keep-Alive: timeout=` of the server wins (less undici's 2 s safety margin).
   */
  idleTimeoutMs?: number;
  /** HTTP/2 PING this often on an open connection (0: never). Pings count as traffic. */
  pingIntervalMs?: number;
  /** Counts the bytes of every platform socket; also tells which protocol an origin speaks. */
  wire?: WireCounter;
  /** TLS session tickets (default a new, empty cache); tls-session-store.ts keeps them across restarts. */
  sessions?: TlsSessionCache;
  /**
   * platform.http2HeaderIndexing: index the bearer in HPACK over h2 (default true). An origin whose
   * server refuses the re-encoded blocks falls back to nghttp2's own encoding until the process ends.
   */
  indexAuthorization?: boolean;
  /** Says once per origin that the header indexer was turned off for it, and why. */
  logger?: Pick<Logger, 'warn'>;
}

/** What PlatformHttp needs of a dispatcher (an undici Agent is one too, for tests). */
export interface PlatformTransport {
  dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean;
  close(): Promise<void>;
}

/**
 * The one HTTP dispatcher of the process: TLS verification always on, bytes counted at the socket,
 * HTTP/2 where the server offers it, HTTP/1.1 otherwise.
 *
 * Per origin (auth, device, planning hosts) one undici Client carries every request while the
 * origin speaks h2 or is not known yet: with h2 that is one multiplexed connection (through the
 * header indexer, HPACK sends the bearer token once per connection, not once per request: nghttp2
 * alone never indexes it; connector.ts), and a second request that
 * arrives while the first connection is still being set up waits for it instead of opening
 * another (an undici Pool opens a second connection for it: a second connection for a
 * single event). Once an origin answered ALPN with http/1.1, its requests go to a Pool of up to
 * maxConnections keep-alive connections, as before. The per-request total deadline lives in
 * PlatformHttp (undici's body timeout restarts with every chunk and cannot bound a slow drip).
 */
export class PlatformDispatcher implements PlatformTransport {
  readonly wire: WireCounter;
  readonly sessions: TlsSessionCache;
  /** Requests in flight per origin (what the uploader's concurrency really achieves). */
  readonly inFlight: InFlightCounter;
  /** trustFingerprint() of the roots every connection is verified with. */
  readonly trust: string;
  readonly #max: number;
  readonly #clientOptions: ClientType.Options;
  readonly #routes = new Map<string, { single?: ClientType; pool?: PoolType; idleTimer?: NodeJS.Timeout }>();
  readonly #idleMs: number;
  readonly #pinging: boolean;
  readonly #indexing: boolean;
  /** Origins whose connections failed because of the header indexer: nghttp2's encoding from then on. */
  readonly #unindexed = new Set<string>();
  readonly #logger: Pick<Logger, 'warn'> | undefined;
  /** Clients taken off an origin by the fallback, finishing what they had queued. */
  readonly #retired = new Set<ClientType>();
  #closed = false;

  constructor(options: PlatformDispatcherOptions) {
    const ca = trustedRoots(options.caFile);
    const idleTimeoutMs = options.idleTimeoutMs ?? 4000;
    this.wire = options.wire ?? new WireCounter();
    this.#idleMs = idleTimeoutMs;
    this.#pinging = (options.pingIntervalMs ?? 0) > 0;
    this.inFlight = new InFlightCounter({ onIdle: (o) => this.#idle(o), onBusy: (o) => this.#busy(o) });
    this.#max = options.maxConnections;
    const http2 = options.http2 ?? true;
    this.#indexing = http2 && options.indexAuthorization !== false;
    this.#logger = options.logger;
    this.sessions = options.sessions ?? new TlsSessionCache();
    this.trust = trustFingerprint(ca ?? rootCertificates);
    const connector = createPlatformConnector(
      {
        ...(ca ? { ca } : {}),
        http2,
        connectTimeoutMs: Math.min(10_000, options.requestTimeoutMs),
        wire: this.wire,
        indexAuthorization: this.#indexing ? (origin) => !this.#unindexed.has(origin) : false,
        onIndexerFault: (origin, reason) => this.#indexerFault(origin, reason),
      },
      this.sessions,
    );
    // An h2 connection runs many requests at once: undici's `pipelining` (1 by default) also caps
    // the streams of an h2 connection, so a Client whose connection negotiated h2 is opened up to
    // H2_STREAMS; over HTTP/1.1 it stays 1 (no HTTP/1.1 pipelining, which proxies handle badly).
    const connect: typeof connector = (params, callback) =>
      connector(params, (err, socket) => {
        if (socket && (socket as TLSSocket).alpnProtocol === 'h2') {
          const single = this.#routes.get(`${params.protocol}//${params.host ?? params.hostname}`)?.single;
          if (single && single.pipelining < H2_STREAMS) single.pipelining = H2_STREAMS;
        }
        callback(err, socket);
      });
    this.#clientOptions = {
      connect: connect as unknown as ClientType.Options['connect'],
      allowH2: http2,
      pingInterval: options.pingIntervalMs ?? 0,
      keepAliveTimeout: idleTimeoutMs,
      // The server's Keep-Alive hint may shorten the idle time, never lengthen it.
      keepAliveMaxTimeout: idleTimeoutMs,
      headersTimeout: options.requestTimeoutMs,
      bodyTimeout: options.requestTimeoutMs,
    };
  }

  dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    if (this.#closed) throw new AgentError('PLATFORM_DISPATCHER_CLOSED', 'the platform dispatcher is closed', { class: 'transient' });
    const origin = String(options.origin);
    let counted = this.inFlight.track(origin, handler);
    // Dispatched onto an indexed connection: should that connection fail because of the indexer,
    // the request goes once more, on nghttp2's own encoding (still counted in flight meanwhile).
    // Safe to repeat: the server refused the header block, so it processed nothing of the request.
    if (this.#indexing && !this.#unindexed.has(origin)) {
      const wrapped: RetryBeforeAnswerHandler = new RetryBeforeAnswerHandler(counted, () => this.#retryUnindexed(origin, options, wrapped));
      counted = wrapped;
    }
    try {
      return this.#route(origin, options, counted);
    } catch (e) {
      InFlightCounter.endNow(counted instanceof RetryBeforeAnswerHandler ? counted.inner : counted);
      throw e;
    }
  }

  #route(origin: string, options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    let route = this.#routes.get(origin);
    if (!route) {
      route = {};
      this.#routes.set(origin, route);
    }
    if (this.#max > 1 && this.wire.protocolOf(origin) === 'http/1.1') {
      route.pool ??= new Pool(origin, { ...this.#clientOptions, connections: this.#max });
      return route.pool.dispatch(options, handler);
    }
    // Client.dispatch queues the request even when it answers false (busy): nothing is dropped.
    route.single ??= new Client(origin, this.#clientOptions);
    const single = route.single;
    const guarded: DeadSessionRetryHandler = new DeadSessionRetryHandler(
      handler,
      () => this.#retryOnNewClient(origin, single, options, guarded),
      () => this.#replaceClient(origin, single),
    );
    return single.dispatch(options, guarded);
  }

  /**
   * `dead`'s HTTP/2 session was destroyed before its socket closed (Node 22 and 24 fail the
   * streams first), and undici gave it a request anyway: a new Client takes the origin and the
   * request; the old one finishes what it queued once it sees its socket close.
   */
  #retryOnNewClient(origin: string, dead: ClientType, options: Dispatcher.DispatchOptions, handler: DeadSessionRetryHandler): boolean {
    if (this.#closed) return false;
    this.#replaceClient(origin, dead);
    // A turn later: undici reports the error from inside its dispatch.
    setImmediate(() => {
      try {
        if (this.#closed) throw new AgentError('PLATFORM_DISPATCHER_CLOSED', 'the platform dispatcher is closed', { class: 'transient' });
        const r = this.#routes.get(origin) ?? {};
        this.#routes.set(origin, r);
        r.single ??= new Client(origin, this.#clientOptions);
        r.single.dispatch(options, handler);
      } catch (e) {
        handler.inner.onResponseError?.(DETACHED_CONTROLLER, e as Error);
      }
    });
    return true;
  }

  /** `dead`'s session failed: the origin's next request opens a new Client; `dead` finishes what it queued. */
  #replaceClient(origin: string, dead: ClientType): void {
    const route = this.#routes.get(origin);
    if (route?.single !== dead) return;
    route.single = undefined;
    clearTimeout(route.idleTimer);
    route.idleTimer = undefined;
    this.#retire(dead);
  }

  /** Takes `old` off duty: it finishes what it queued, then closes. */
  #retire(old: ClientType): void {
    this.#retired.add(old);
    setImmediate(() =>
      old
        .close()
        .catch(() => undefined)
        .finally(() => this.#retired.delete(old)),
    );
  }

  /** The header indexer caused a connection of `origin` to fail: nghttp2's own encoding from now on. */
  #indexerFault(origin: string, reason: string): void {
    if (this.#unindexed.has(origin)) return;
    this.#unindexed.add(origin);
    // The indexer ends the connection it ran on. Its Client may still hold the dying socket for a
    // turn, so the requests sent again go to a new one; the old one finishes what it queued.
    const route = this.#routes.get(origin);
    const old = route?.single;
    if (route && old) {
      route.single = undefined;
      this.#retire(old);
    }
    this.wire.headerIndexerOff(origin, reason);
    this.#logger?.warn(
      { origin, reason },
      "HTTP/2 header indexer off for this platform host until the agent restarts: its requests go with the HTTP library's own header encoding (the bearer in every request)",
    );
  }

  /** A request failed before any answer: sent once more when its origin's indexer failed meanwhile. */
  #retryUnindexed(origin: string, options: Dispatcher.DispatchOptions, handler: RetryBeforeAnswerHandler): boolean {
    if (!this.#unindexed.has(origin) || this.#closed) return false;
    // A turn later: undici is still failing the connection's requests when it reports this one.
    setImmediate(() => {
      try {
        if (this.#closed) throw new AgentError('PLATFORM_DISPATCHER_CLOSED', 'the platform dispatcher is closed', { class: 'transient' });
        this.#route(origin, options, handler);
      } catch (e) {
        handler.inner.onResponseError?.(DETACHED_CONTROLLER, e as Error);
      }
    });
    return true;
  }

  /**
   * The last request of `origin` ended: its single connection (h2, or HTTP/1.1 before the origin's
   * protocol is known) closes after idleTimeoutMs unless a request comes first. Idle means no
   * request in flight and none for that long: a timer on the TLS socket is not reset by
   * the h2 session's own reads and writes, and closed busy connections every idleTimeoutS, failing
   * the request in flight at that moment. undici closes idle HTTP/1.1 sockets itself (keepAlive)
   * but keeps an h2 connection open for ever. With PINGs configured the connection is kept open
   * (a tuned pingIntervalMs: bench:wire; the daemon sends none, PING_INTERVAL_S).
   */
  #idle(origin: string): void {
    const route = this.#routes.get(origin);
    if (!route?.single || this.#pinging || this.#idleMs <= 0) return;
    clearTimeout(route.idleTimer);
    route.idleTimer = setTimeout(() => {
      route.idleTimer = undefined;
      const single = route.single;
      if (!single || this.inFlight.count(origin) > 0) return;
      // The next request opens a new connection (resuming the TLS session); nothing is in flight here.
      route.single = undefined;
      single.close().catch(() => undefined);
    }, this.#idleMs);
    route.idleTimer.unref();
  }

  #busy(origin: string): void {
    const route = this.#routes.get(origin);
    if (route?.idleTimer) {
      clearTimeout(route.idleTimer);
      route.idleTimer = undefined;
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const r of this.#routes.values()) clearTimeout(r.idleTimer);
    const all = [...this.#routes.values()].flatMap((r) => [r.single, r.pool]).filter((d) => d !== undefined);
    this.#routes.clear();
    await Promise.all([...all.map((d) => d.close()), ...[...this.#retired].map((d) => d.close().catch(() => undefined))]);
  }

  async destroy(): Promise<void> {
    this.#closed = true;
    for (const r of this.#routes.values()) clearTimeout(r.idleTimer);
    const all = [...this.#routes.values()].flatMap((r) => [r.single, r.pool]).filter((d) => d !== undefined);
    all.push(...this.#retired);
    this.#routes.clear();
    await Promise.all(all.map((d) => d.destroy()));
  }
}

export function createPlatformDispatcher(options: PlatformDispatcherOptions): PlatformDispatcher {
  return new PlatformDispatcher(options);
}

/** Node's bundled roots plus platform.caFile, or undefined for the bundled roots alone. */
function trustedRoots(caFile: string | undefined): string[] | undefined {
  if (caFile === undefined) return undefined;
  let pem: string;
  try {
    pem = readFileSync(caFile, 'utf8');
  } catch (e) {
    throw new AgentError(
      'PLATFORM_CA_UNREADABLE',
      `platform.caFile: cannot read ${caFile} (${(e as NodeJS.ErrnoException).code ?? String(e)}); fix the path or remove the key`,
      { class: 'config', cause: e },
    );
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new AgentError('PLATFORM_CA_INVALID', `platform.caFile: ${caFile} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`, {
      class: 'config',
    });
  }
  // `ca` replaces Node's bundled roots; keep them so that the public endpoints still verify.
  return [...rootCertificates, pem];
}
