import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createSecureServer, type Http2SecureServer, type ServerHttp2Session } from 'node:http2';
import { createServer as createHttpsServer } from 'node:https';
import { constants } from 'node:crypto';
import type { AddressInfo, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { SimStats } from './stats.js';

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
  /**
   * false: the server resumes no TLS session (no tickets, no session cache), so every connection
   * pays the full handshake and certificate chain: the worst case a platform's front can be.
   */
  resumption?: boolean;
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

/**
 * The simulator's listening side: plain HTTP/1.1, or TLS with HTTP/1.1 or HTTP/2 (ALPN), the idle
 * timeouts a gateway in front of a real service has, and every connection and session tracked so
 * that a stop, a GOAWAY or a dropped link reaches them all. Counts connections in stats.connections.
 */
export class SimListener {
  readonly #stats: SimStats;
  #server: Server | Http2SecureServer | undefined;
  readonly #sockets = new Set<Socket>();
  readonly #sessions = new Set<ServerHttp2Session>();

  constructor(stats: SimStats) {
    this.#stats = stats;
  }

  /** Listens on 127.0.0.1 (options.port, default any); returns the port. */
  async listen(handler: (req: IncomingMessage, res: ServerResponse) => void, options: SimStartOptions): Promise<number> {
    const idleMs = options.idleTimeoutMs ?? 5000;
    let server: Server | Http2SecureServer;
    const tls = options.tls;
    const tickets = {
      ...(tls?.ticketLifetimeS !== undefined ? { sessionTimeout: tls.ticketLifetimeS } : {}),
      ...(tls?.ticketKeys ? { ticketKeys: tls.ticketKeys } : {}),
      ...(tls?.resumption === false ? { secureOptions: constants.SSL_OP_NO_TICKET } : {}),
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
    return (server.address() as AddressInfo).port;
  }

  /** Stops listening and cuts every connection. */
  /** Serves another certificate to new TLS connections. */
  setCertificate(tls: { key: string | Buffer; cert: string | Buffer }): void {
    const server = this.#server;
    if (!server || !('setSecureContext' in server)) throw new Error('setCertificate: the simulator is not serving TLS');
    server.setSecureContext({ key: tls.key, cert: tls.cert });
  }

  async close(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    this.#server = undefined;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const session of this.#sessions) session.destroy();
    for (const socket of this.#sockets) socket.destroy();
    await closed;
  }

  /** GOAWAY and close on every open HTTP/2 session; returns how many were told. */
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

  /** Cuts every connection now, answers in flight included; returns how many there were. */
  dropConnections(): number {
    const n = this.#sockets.size;
    for (const session of this.#sessions) session.destroy();
    for (const socket of this.#sockets) socket.destroy();
    return n;
  }
}
