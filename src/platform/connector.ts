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
 *   handshake); a resumed handshake skips the certificate chain (issue 16: about 3.4 KB full);
 * - an h2 connection closes after `idleTimeoutMs` without a byte either way (undici keeps h2
 *   connections open for ever; its keep-alive timeout is HTTP/1.1 only).
 *
 * TLS verification always stays on: `rejectUnauthorized` is not an option here.
 */
import net, { type Socket } from 'node:net';
import tls, { type TLSSocket } from 'node:tls';
import type { WireCounter } from './wire-counter.js';

export interface PlatformConnectorOptions {
  /** Trusted roots (system roots + platform.caFile); undefined: Node's bundled roots. */
  ca?: string[];
  /** Offer h2 in ALPN. */
  http2: boolean;
  connectTimeoutMs: number;
  /** h2 only: close the connection after this long without traffic. */
  idleTimeoutMs: number;
  wire?: WireCounter;
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

/** Session tickets by origin (servername:port); the newest ticket wins. Held strongly, one per origin. */
export class TlsSessionCache {
  readonly #sessions = new Map<string, Buffer>();
  get(key: string): Buffer | undefined {
    return this.#sessions.get(key);
  }
  set(key: string, session: Buffer): void {
    this.#sessions.set(key, session);
  }
  delete(key: string): void {
    this.#sessions.delete(key);
  }
  get size(): number {
    return this.#sessions.size;
  }
}

export function createPlatformConnector(o: PlatformConnectorOptions, sessions: TlsSessionCache = new TlsSessionCache()): Connector {
  // One secure context for every connection: with `ca` given per connect, Node builds a new
  // context and parses the ~140 bundled roots each time (a profile of bench:wire: most of its CPU).
  const secureContext = o.ca ? tls.createSecureContext({ ca: o.ca }) : undefined;
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
      o.wire?.track(tcp);
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
    const session = sessions.get(key);
    const secure: TLSSocket = tls.connect({
      socket: tcp,
      // The name the certificate is checked against (an IP address included).
      host: params.hostname,
      ...(servername ? { servername } : {}),
      ...(secureContext ? { secureContext } : {}),
      ...(session ? { session } : {}),
      ALPNProtocols: o.http2 ? ['h2', 'http/1.1'] : ['http/1.1'],
      rejectUnauthorized: true,
    });
    // TLS 1.3 sends tickets after the handshake (Node servers two); keep the newest.
    socket = secure;
    o.wire?.track(tcp, secure);
    secure.on('session', (s: Buffer) => sessions.set(key, s));
    secure.once('secureConnect', () => {
      const protocol = secure.alpnProtocol === 'h2' ? 'h2' : 'http/1.1';
      o.wire?.negotiated(origin, protocol, secure.isSessionReused());
      if (protocol === 'h2' && o.idleTimeoutMs > 0) {
        secure.setTimeout(o.idleTimeoutMs, () => {
          // No byte for idleTimeoutMs: no request can be waiting on this connection (requests time
          // out sooner, platform.requestTimeoutMs), so a clean close_notify + FIN loses nothing.
          secure.end();
        });
      }
      finish(null, secure);
    });
    secure.on('error', (err) => {
      // A ticket the server no longer takes would fail every resumption the same way.
      if (session) sessions.delete(key);
      finish(err, null);
    });
    return secure;
  };
}
