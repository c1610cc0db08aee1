/**
 * The daemon's status socket: answers `{"get":"status"}` with one JSON line and hands
 * `{"subscribe":"fixes"}` to the fix publisher (status-protocol.ts). A Unix socket, mode 0660: the service
 * user and its group (technicians in the group can run `status` without root), no network exposure.
 */
import { chmodSync, lstatSync, unlinkSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { describeError, type ErrorCode, errorFields } from '../errors.js';
import type { Logger } from '../log.js';
import { GET_STATUS, MAX_REQUEST_LINE } from './status-protocol.js';
import { ensureSocketDir } from './path.js';
import type { StatusProvider } from '../status/snapshot.js';

/** The part of the fix publisher (src/socket/fix-publisher.ts) the server needs. */
export interface FixSubscriptions {
  subscribe(socket: Socket): void;
  stop(): Promise<void>;
}

export interface StatusServerOptions {
  socketPath: string;
  provider: StatusProvider;
  logger: Logger;
  fixes?: FixSubscriptions;
  /** Socket file mode; default 0o660. */
  mode?: number;
  /** A client that sends no request line within this long is closed. */
  requestTimeoutMs?: number;
  /** Connections served at once (status requests and fix subscribers together); more are refused. */
  maxClients?: number;
  /** After the answer, a client that does not read it and close within this long is cut off. */
  lingerMs?: number;
}

/**
 * The socket is a window onto the daemon, so it must not be a way to starve it (issue 13.5):
 * 1,100 idle connections once used up the daemon's 1,024 file descriptors. `status`,
 * `location here` and doctor need one connection each; 16 leaves room for a few technicians and
 * scripts at once. With LimitNOFILE= in the unit the bound keeps the socket far from the limit.
 */
export const MAX_STATUS_CLIENTS = 16;

export class StatusServer {
  readonly #o: StatusServerOptions;
  #server: Server | undefined;
  readonly #sockets = new Set<Socket>();
  /** Inode of the socket file this server bound: stop() removes that file and no other. */
  #created: number | undefined;

  constructor(options: StatusServerOptions) {
    this.#o = options;
  }

  get socketPath(): string {
    return this.#o.socketPath;
  }

  async start(): Promise<void> {
    const file = this.#o.socketPath;
    ensureSocketDir(file);
    await removeStaleSocket(file);
    const server = createServer((socket) => this.#accept(socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(file, () => {
        server.off('error', reject);
        resolve();
      });
    });
    chmodSync(file, this.#o.mode ?? 0o660);
    this.#created = lstatSync(file).ino;
    server.on('error', (e) => this.#o.logger.warn({ err: errorFields(e) }, 'status socket error'));
    this.#server = server;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (!server) return;
    await this.#o.fixes?.stop().catch(() => undefined);
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    // Never unlink a socket another process bound meanwhile (issue 13.1).
    try {
      if (lstatSync(this.#o.socketPath).ino === this.#created) unlinkSync(this.#o.socketPath);
    } catch {
      // already gone (server.close removes it on most platforms)
    }
    this.#created = undefined;
  }

  #accept(socket: Socket): void {
    socket.on('error', () => socket.destroy());
    if (this.#sockets.size >= (this.#o.maxClients ?? MAX_STATUS_CLIENTS)) {
      // One line, then the connection is gone whether or not the client reads it.
      this.#fail(
        socket,
        'TOO_MANY_CLIENTS',
        `the daemon serves ${this.#o.maxClients ?? MAX_STATUS_CLIENTS} status clients at once; try again`,
      );
      return;
    }
    this.#sockets.add(socket);
    socket.once('close', () => this.#sockets.delete(socket));
    socket.setEncoding('utf8');
    socket.setTimeout(this.#o.requestTimeoutMs ?? 5000, () => socket.destroy());
    let buffer = '';
    const onData = (chunk: string): void => {
      buffer += chunk;
      const nl = buffer.indexOf('\n');
      if (nl < 0) {
        if (buffer.length > MAX_REQUEST_LINE) this.#fail(socket, 'REQUEST_TOO_LONG', `request longer than ${MAX_REQUEST_LINE} bytes`);
        return;
      }
      socket.off('data', onData);
      socket.setTimeout(0);
      void this.#handle(socket, buffer.slice(0, nl).trim());
    };
    socket.on('data', onData);
  }

  async #handle(socket: Socket, line: string): Promise<void> {
    let request: unknown;
    try {
      request = JSON.parse(line) as unknown;
    } catch {
      this.#fail(socket, 'BAD_REQUEST', 'request is not JSON; send {"get":"status"} or {"subscribe":"fixes"}');
      return;
    }
    const r = (typeof request === 'object' && request !== null ? request : {}) as Record<string, unknown>;
    if (r.get === GET_STATUS.get) {
      try {
        const snapshot = await this.#o.provider.snapshot();
        this.#answer(socket, `${JSON.stringify({ status: snapshot })}\n`);
      } catch (e) {
        this.#o.logger.warn({ err: errorFields(e) }, 'status snapshot failed');
        this.#fail(socket, 'SNAPSHOT_FAILED', describeError(e));
      }
      return;
    }
    if (r.subscribe === 'fixes' && this.#o.fixes) {
      this.#o.fixes.subscribe(socket);
      return;
    }
    this.#fail(socket, 'UNKNOWN_REQUEST', 'unknown request; send {"get":"status"} or {"subscribe":"fixes"}');
  }

  #fail(socket: Socket, code: ErrorCode, message: string): void {
    this.#answer(socket, `${JSON.stringify({ error: { code, message } })}\n`);
  }

  /** Sends the one answer and closes; a client that never reads it does not keep its buffer. */
  #answer(socket: Socket, line: string): void {
    socket.end(line);
    setTimeout(() => socket.destroy(), this.#o.lingerMs ?? 5000).unref();
  }
}

/**
 * A socket file left by a crashed daemon blocks listen(); a non-socket file there is not ours, and
 * neither is a socket that something still answers on (another daemon configured with the same
 * status.socketPath): that one is left alone and this server does not start.
 */
async function removeStaleSocket(file: string): Promise<void> {
  try {
    if (!lstatSync(file).isSocket()) return;
  } catch {
    return; // absent: nothing to remove
  }
  const live = await new Promise<boolean>((resolve) => {
    const probe = connect({ path: file });
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', (e: NodeJS.ErrnoException) => resolve(e.code !== 'ECONNREFUSED' && e.code !== 'ENOENT'));
  });
  if (live) throw new Error(`${file} is in use by another process; not taking it over`);
  try {
    unlinkSync(file);
  } catch {
    // gone meanwhile
  }
}
