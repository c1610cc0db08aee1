/**
 * The connector under the platform dispatcher (undici's `connect` option): opens the TCP socket
 * itself and runs TLS over it, so that
 *
 * - the bytes are counted on the TCP socket (a TLSSocket's own bytesWritten/bytesRead count
 *   plaintext; measured), handshakes, record headers and close_notify included (wire-counter.ts);
 * - ALPN offers h2 before http/1.1, and the answer is remembered per origin (dispatcher.ts routes
 *   by it);
 * - TLS session tickets are held strongly per origin (undici's own cache holds them through
 *   WeakRefs, so a ticket could be collected in a parked hour and the next heartbeat pay a full
 *   handshake); a resumed handshake skips the certificate chain (about 3.4 KB full);
 * - over h2, undici's session talks to the TLS socket through the header indexer, which has the
 *   bearer token indexed in HPACK (nghttp2 never indexes `authorization`).
 *
 * When an idle h2 connection closes is the dispatcher's (dispatcher.ts): idle means no request in
 * flight, which the socket cannot see (the h2 session's reads and writes do not reset its timer).
 *
 * TLS verification always stays on: `rejectUnauthorized` is not an option here.
 */
import { systemClock, type Clock } from '../../system/clock.js';
import net, { type Socket } from 'node:net';
import tls, { type TLSSocket } from 'node:tls';
import { H2HeaderIndexer } from './h2-header-indexer.js';
import type { WireCounter } from './wire-counter.js';

export interface PlatformConnectorOptions {
  /** Trusted roots (system roots + platform.caFile); undefined: Node's bundled roots. */
  ca?: string[];
  /** Offer h2 in ALPN. */
  http2: boolean;
  connectTimeoutMs: number;
  wire?: WireCounter;
  /**
   * h2 only: index the bearer token in HPACK through the header indexer (default true), so that
   * it crosses the link once per connection instead of once per request (h2-header-indexer.ts).
   * A function is asked per connection with the origin (the dispatcher's per-origin fallback).
   */
  indexAuthorization?: boolean | ((origin: string) => boolean);
  /** An indexed connection to `origin` failed in a way the indexer can cause (h2-header-indexer.ts onFault). */
  onIndexerFault?: (origin: string, reason: string) => void;
}

export interface ConnectParams {
  hostname: string;
  host?: string;
  protocol: string;
  port: string | number;
  servername?: string | null;
  localAddress?: string | null;
}

export type Connector = (params: ConnectParams, callback: (err: Error | null, socket: Socket | null) => void) => Socket;

/**
 * What the ClientHello offers, shorter than node's defaults: every reconnect sends it, and a parked
 * gateway reconnects at every heartbeat (bench:wire: 142 B less per handshake, a resumed one
 * included, about 15 %). TLS 1.3's three suites, TLS 1.2 only with ECDHE and an AEAD (what every
 * current load balancer policy offers; node's list adds CBC and DHE suites), the signature schemes
 * of public certificate chains (RSA, ECDSA P-256/P-384/P-521, EdDSA), and X25519 and the NIST curves
 * for key exchange.
 */
const CLIENT_HELLO = {
  ciphers: [
    'TLS_AES_128_GCM_SHA256',
    'TLS_AES_256_GCM_SHA384',
    'TLS_CHACHA20_POLY1305_SHA256',
    'ECDHE-ECDSA-AES128-GCM-SHA256',
    'ECDHE-RSA-AES128-GCM-SHA256',
    'ECDHE-ECDSA-AES256-GCM-SHA384',
    'ECDHE-RSA-AES256-GCM-SHA384',
    'ECDHE-ECDSA-CHACHA20-POLY1305',
    'ECDHE-RSA-CHACHA20-POLY1305',
  ].join(':'),
  sigalgs: [
    'ecdsa_secp256r1_sha256',
    'ecdsa_secp384r1_sha384',
    'ecdsa_secp521r1_sha512',
    'ed25519',
    'rsa_pss_rsae_sha256',
    'rsa_pss_rsae_sha384',
    'rsa_pss_rsae_sha512',
    'rsa_pkcs1_sha256',
    'rsa_pkcs1_sha384',
    'rsa_pkcs1_sha512',
  ].join(':'),
  ecdhCurve: 'X25519:P-256:P-384',
};

/** At most this many tickets per origin (a TLS 1.3 server sends two per full handshake). */
const TICKETS_PER_ORIGIN = 4;

interface Ticket {
  session: Buffer;
  /** Offered in a ClientHello at least once. */
  offered: boolean;
  /** When the server sent it (host wall clock, ms): the 7-day bound of tls-session-store.ts counts from here. */
  receivedAtWallMs: number;
}

/** A ticket as persisted and loaded again (tls-session-store.ts). */
export interface TicketEntry {
  key: string;
  session: Buffer;
  offered: boolean;
  receivedAtWallMs: number;
}

/**
 * TLS session tickets by origin (servername:port), newest first, held strongly.
 *
 * Which ticket is offered matters (once 14 of 27 reconnects resumed): a TLS 1.3 server sends
 * two tickets after a full handshake; a server with stateless tickets (OpenSSL's default: node,
 * nginx) accepts a ticket again and again and sends no new one on resumption, while a server with
 * single-use tickets (stateful ones, some TLS terminators) refuses a ticket it has seen and sends
 * a fresh one with every resumption. So: the newest ticket never offered goes first; when every
 * ticket was offered, the newest is offered again; a ticket the server did not take (it answered
 * with a full handshake) is dropped. A connection that ends badly after its handshake says nothing
 * about its ticket (undici destroys every socket it closes with an error, which dropped the ticket
 * of every resumed connection, so that every other reconnect paid a full handshake).
 */
export class TlsSessionCache {
  readonly #tickets = new Map<string, Ticket[]>();
  readonly #clock: Pick<Clock, 'wallMs'>;
  #changed = 0;

  /** `clock`: its wall clock stamps each ticket's receipt (default the system's). */
  constructor(options: { clock?: Pick<Clock, 'wallMs'> } = {}) {
    this.#clock = options.clock ?? systemClock;
  }

  /** The ticket to offer for `key`, or undefined (a full handshake). */
  take(key: string): Buffer | undefined {
    const list = this.#tickets.get(key);
    if (!list || list.length === 0) return undefined;
    const t = list.find((x) => !x.offered) ?? list[0]!;
    if (!t.offered) this.#changed++;
    t.offered = true;
    return t.session;
  }

  /** A ticket the server sent (node's 'session' event, once per ticket). */
  add(key: string, session: Buffer): void {
    const list = this.#tickets.get(key) ?? [];
    list.unshift({ session, offered: false, receivedAtWallMs: this.#clock.wallMs() });
    list.length = Math.min(list.length, TICKETS_PER_ORIGIN);
    this.#tickets.set(key, list);
    this.#changed++;
  }

  /** The server did not resume `session` (expired, unknown key, single-use and seen): never offer it again. */
  refused(key: string, session: Buffer): void {
    const list = this.#tickets.get(key);
    if (!list) return;
    const rest = list.filter((t) => t.session !== session);
    if (rest.length === list.length) return;
    if (rest.length > 0) this.#tickets.set(key, rest);
    else this.#tickets.delete(key);
    this.#changed++;
  }

  /** Origins with at least one ticket. */
  get size(): number {
    return this.#tickets.size;
  }

  /** Tickets held for `key` (tests, bench). */
  count(key: string): number {
    return this.#tickets.get(key)?.length ?? 0;
  }

  /** Bumped on every change: a persister writes only when it moved. */
  get version(): number {
    return this.#changed;
  }

  /** Every ticket, newest first per origin, for persisting (tls-session-store.ts). */
  entries(): TicketEntry[] {
    return [...this.#tickets].flatMap(([key, list]) =>
      list.map((t) => ({ key, session: t.session, offered: t.offered, receivedAtWallMs: t.receivedAtWallMs })),
    );
  }

  /** Tickets persisted by an earlier process, newest first per origin; they come after any held now. */
  load(entries: TicketEntry[]): void {
    for (const e of entries) {
      const list = this.#tickets.get(e.key) ?? [];
      if (list.length >= TICKETS_PER_ORIGIN) continue;
      list.push({ session: e.session, offered: e.offered, receivedAtWallMs: e.receivedAtWallMs });
      this.#tickets.set(e.key, list);
    }
  }
}

export function createPlatformConnector(o: PlatformConnectorOptions, sessions: TlsSessionCache = new TlsSessionCache()): Connector {
  // One secure context for every connection: with `ca` given per connect, Node builds a new
  // context and parses the ~140 bundled roots each time (a profile of bench:wire: most of its CPU).
  const secureContext = tls.createSecureContext({ ...(o.ca ? { ca: o.ca } : {}), ...CLIENT_HELLO });
  return (params, callback) => {
    const port = Number(params.port) || (params.protocol === 'https:' ? 443 : 80);
    const origin = `${params.protocol}//${params.host ?? `${params.hostname}:${port}`}`;
    const tcp = net.connect({ host: params.hostname, port, ...(params.localAddress ? { localAddress: params.localAddress } : {}) });
    tcp.setNoDelay(true);
    // TCP keep-alive probes find a dead path while parked without an HTTP byte (undici's default).
    tcp.setKeepAlive(true, 60_000);
    let socket: Socket = tcp;
    let done = false;
    const finish = (err: Error | null, socket: Socket | null): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      callback(err, socket);
    };
    const timer = setTimeout(() => {
      const err = Object.assign(new Error(`connect timeout after ${o.connectTimeoutMs} ms (${params.hostname}:${port})`), {
        code: 'UND_ERR_CONNECT_TIMEOUT',
      });
      socket.destroy(err);
      finish(err, null);
    }, o.connectTimeoutMs);

    if (params.protocol !== 'https:') {
      o.wire?.track(tcp, undefined, origin);
      tcp.once('connect', () => {
        o.wire?.negotiated(origin, 'http/1.1', undefined);
        finish(null, tcp);
      });
      tcp.on('error', (err) => finish(err, null));
      return tcp;
    }
    // Errors of the TCP socket reach the TLS socket too; this listener only keeps them from being unhandled.
    tcp.on('error', (err) => finish(err, null));

    const servername = params.servername || (net.isIP(params.hostname) ? undefined : params.hostname);
    const key = `${servername ?? params.hostname}:${port}`;
    const session = sessions.take(key);
    const secure: TLSSocket = tls.connect({
      socket: tcp,
      // The name the certificate is checked against (an IP address included).
      host: params.hostname,
      ...(servername ? { servername } : {}),
      secureContext,
      ...(session ? { session } : {}),
      ALPNProtocols: o.http2 ? ['h2', 'http/1.1'] : ['http/1.1'],
      rejectUnauthorized: true,
    });
    // TLS 1.3 sends tickets after the handshake (node servers two, none on a resumption).
    socket = secure;
    o.wire?.track(tcp, secure, origin);
    secure.on('session', (s: Buffer) => sessions.add(key, s));
    let handshaken = false;
    secure.once('secureConnect', () => {
      handshaken = true;
      const protocol = secure.alpnProtocol === 'h2' ? 'h2' : 'http/1.1';
      const resumed = secure.isSessionReused();
      if (session && !resumed) sessions.refused(key, session);
      o.wire?.negotiated(origin, protocol, resumed, tcp.bytesWritten + tcp.bytesRead);
      // undici needs of the socket only what the indexer has (client-h2.js: events, destroy, ref, alpnProtocol).
      const wire = o.wire;
      const onFault = o.onIndexerFault;
      const indexer = () =>
        new H2HeaderIndexer(secure, {
          ...(wire ? { onBlock: (a: number, b: number) => wire.headerBlock(a, b) } : {}),
          ...(onFault ? { onFault: (reason: string) => onFault(origin, reason) } : {}),
        });
      const index = typeof o.indexAuthorization === 'function' ? o.indexAuthorization(origin) : o.indexAuthorization !== false;
      finish(null, protocol === 'h2' && index ? (indexer() as unknown as Socket) : secure);
    });
    secure.on('error', (err) => {
      // A handshake that failed with a ticket offered may have failed because of it; once the
      // handshake is done, how the connection ends says nothing about the ticket.
      if (session && !handshaken) sessions.refused(key, session);
      finish(err, null);
    });
    return secure;
  };
}
