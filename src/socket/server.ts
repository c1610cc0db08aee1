/**
 * The daemon's status socket: answers `{"get":"status"}` with one JSON line and hands
 * `{"subscribe":"fixes"}` to the fix publisher (status-protocol.ts). A Unix socket, mode 0660: the service
 * user and its group (technicians in the group can run `status` without root), no network exposure.
 */
import { systemClock, type Clock } from '../system/clock.js';
import { createServer, type Server, type Socket } from 'node:net';
import { describeError, type ErrorCode, errorFields } from '../errors.js';
import type { Logger } from '../log.js';
import { GET_STATUS, MAX_REQUEST_LINE } from './status-protocol.js';
import { ensureSocketDir } from './path.js';
import { claimSocketFile, releaseSocketFile, removeStaleSocket } from './socket-file.js';
import { SnapshotLineCache, type SnapshotProvider } from './snapshot-cache.js';
import { AnswerPacer } from './answer-pacer.js';

/** The part of the fix publisher (src/socket/fix-publisher.ts) the server needs. */
export interface FixSubscriptions {
  subscribe(socket: Socket): void;
  stop(): Promise<void>;
}

export interface StatusServerOptions {
  socketPath: string;
  provider: SnapshotProvider;
  logger: Logger;
  fixes?: FixSubscriptions;
  /** Socket file mode; default 0o660. */
  mode?: number;
  /** A client that sends no request line within this long is closed. */
  requestTimeoutMs?: number;
  /** Connections held at once (status requests and fix subscribers together); see MAX_STATUS_CLIENTS. */
  maxClients?: number;
  /** Fix subscribers at once (each may queue 64 KiB); the rest of maxClients stays free for status. */
  maxSubscribers?: number;
  /** An answered client whose answer did not fit the kernel's buffer is cut off after this long. */
  lingerMs?: number;
  /** The snapshot is built at most once per this long, however many ask (default 500 ms). */
  snapshotIntervalMs?: number;
  /** Status answers per second at most (default 100), first come first served. */
  answersPerS?: number;
  /** Its monotonic clock times the queue, evictions, pacing and the snapshot cache (default the system's). */
  clock?: Pick<Clock, 'monotonicMs'>;
}

/**
 * The socket is a window onto the daemon, so it must not be a way to starve it or to lock the
 * technician out. A connection costs one descriptor and a few KiB, so 64 held
 * and 64 waiting keep the daemon far from its descriptor limit; what bounds the memory is that an
 * answered client holds nothing (the answer goes into the kernel's buffer and the connection is
 * closed at once) and that a waiting one is not read.
 *
 * Being full does not lock anyone out: a new connection joins a first-come, first-served queue,
 * unread, and each held connection that has not sent its request within EVICT_AFTER_MS gives its
 * place to the queue's head (`status`, `location here` and doctor send their request with the
 * connection, so only an idle or hostile client waits without one). Queued connections are let in
 * as held ones go: a flood that fills every place with idle connections frees one every
 * EVICT_AFTER_MS / 64, so a technician's `status` is let in within about (its place in the queue /
 * 64) x EVICT_AFTER_MS however fast the flood reconnects; without the queue, a flood reconnecting
 * thousands of times a second won every freed place from a client retrying every few tens of ms.
 * Past the queue, Node closes a new connection before it becomes a Socket, so a flood beyond it
 * costs no JavaScript objects. Answers are paced (ANSWERS_PER_S), first come first served.
 */
export const MAX_STATUS_CLIENTS = 64;
export const MAX_FIX_SUBSCRIBERS = 8;
/** Connections waiting for a place, unread, first come first served. */
export const MAX_QUEUED = 64;
/**
 * A held connection that has sent nothing gives its place to a queued one after this long.
 * Clients that ask send the request with the connection; a queued one is read as soon as it is
 * let in, so its request is already there.
 */
const EVICT_AFTER_MS = 100;
/**
 * Status answers per second, with a burst (see AnswerPacer): more than any technician, `status
 * --watch`, doctor and demo together need, and few enough that clients asking and closing as fast
 * as they can do not grow the heap. A client waiting for its answer holds its place, so a crowd of
 * them fills the places and the rest wait in the queue, unread.
 */
const ANSWERS_PER_S = 100;
const ANSWER_BURST = 32;
/** A queued connection let in to nothing for this long is refused with a line (it may ask again). */
const QUEUE_WAIT_MS = 2000;
/** A refused client has this long to read its one line. */
const REFUSAL_LINGER_MS = 1000;

/** waiting: no request yet; asked: its snapshot is being built; flushing: the answer did not fit the kernel's buffer. */
type Phase = 'waiting' | 'asked' | 'flushing' | 'subscribed';

/** A refusal written and dropped at once: a client that asks again and again costs no memory. */
function errorLine(code: ErrorCode, message: string): string {
  return `${JSON.stringify({ error: { code, message } })}\n`;
}

export class StatusServer {
  readonly #options: StatusServerOptions;
  #server: Server | undefined;
  /** Every connection held, oldest first (Map keeps insertion order). */
  readonly #sockets = new Map<Socket, { phase: Phase; sinceMs: number }>();
  /** Refused at accept, their one line on the way (at most MAX_STATUS_CLIENTS). */
  readonly #refusing = new Set<Socket>();
  /** Waiting for a place, unread (paused since accept), oldest first, with when each came. */
  readonly #queue = new Map<Socket, number>();
  /** Runs while the queue is not empty: lets the head in as places free (see #pump). */
  #queueTimer: NodeJS.Timeout | undefined;
  readonly #pacer: AnswerPacer;
  #stopping = false;
  readonly #snapshots: SnapshotLineCache;
  /** Inode of the socket file this server bound: stop() removes that file and no other. */
  #created: number | undefined;

  constructor(options: StatusServerOptions) {
    this.#options = options;
    this.#snapshots = new SnapshotLineCache(options.provider, options.snapshotIntervalMs ?? 500, options.clock);
    this.#pacer = new AnswerPacer(options.answersPerS ?? ANSWERS_PER_S, ANSWER_BURST, options.clock);
  }

  get socketPath(): string {
    return this.#options.socketPath;
  }

  /** Snapshots built since start (at most one per snapshotIntervalMs). */
  get snapshotsBuilt(): number {
    return this.#snapshots.builds;
  }

  async start(): Promise<void> {
    this.#stopping = false;
    const file = this.#options.socketPath;
    ensureSocketDir(file);
    await removeStaleSocket(file);
    // Paused on accept: a queued connection is not read (nor its request buffered) until let in.
    const server = createServer({ pauseOnConnect: true }, (socket) => this.#accept(socket));
    // Past the connections held, queued and refused on their way, Node closes a new connection
    // before it becomes a Socket: a flood of reconnecting clients then costs no JavaScript
    // objects (each Socket made and dropped grew the heap by tens of MB at thousands a second).
    server.maxConnections = this.#connectionCap();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(file, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.#created = claimSocketFile(file, this.#options.mode ?? 0o660);
    server.on('error', (e) => this.#options.logger.warn({ err: errorFields(e) }, 'status socket error'));
    this.#server = server;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (!server) return;
    // Connections Node accepts until close() below are dropped, not admitted or queued.
    this.#stopping = true;
    await this.#options.fixes?.stop().catch(() => undefined);
    clearInterval(this.#queueTimer);
    this.#queueTimer = undefined;
    this.#pacer.stop();
    for (const s of [...this.#sockets.keys(), ...this.#queue.keys(), ...this.#refusing]) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    if (this.#created !== undefined) releaseSocketFile(this.#options.socketPath, this.#created);
    this.#created = undefined;
  }

  /** Connections held, queued for a place, and refused with a line on its way. */
  get connections(): { held: number; queued: number; refusing: number } {
    return { held: this.#sockets.size, queued: this.#queue.size, refusing: this.#refusing.size };
  }

  #accept(socket: Socket): void {
    socket.on('error', () => socket.destroy());
    if (this.#stopping) {
      socket.destroy();
      return;
    }
    const max = this.#options.maxClients ?? MAX_STATUS_CLIENTS;
    if (max === 0) {
      this.#refuse(socket, 'TOO_MANY_CLIENTS', `the daemon serves ${max} status clients at once; try again`);
      return;
    }
    if (this.#queue.size === 0 && this.#mayAdmit(max)) {
      this.#admit(socket);
      return;
    }
    if (this.#queue.size >= MAX_QUEUED) {
      socket.destroy();
      return;
    }
    this.#queue.set(socket, this.#now());
    socket.once('close', () => this.#queue.delete(socket));
    this.#bound();
    this.#queueTimer ??= setInterval(() => this.#pump(), EVICT_AFTER_MS / 4);
    this.#queueTimer.unref();
  }

  /** A place, free or made by #evictOne. */
  #mayAdmit(max: number): boolean {
    return this.#sockets.size < max || this.#evictOne();
  }

  /**
   * With the queue full, Node closes new connections before they become Sockets (maxConnections
   * counts every connection it has made a Socket for); below that, the usual cap.
   */
  #bound(): void {
    const server = this.#server;
    if (!server) return;
    server.maxConnections =
      this.#queue.size >= MAX_QUEUED ? Math.max(1, this.#sockets.size + this.#queue.size + this.#refusing.size) : this.#connectionCap();
  }

  /**
   * Lets queued connections in, oldest first, as places and admissions free: when one closes, and
   * at the admission rate, when held ones that have said nothing give theirs. A queued connection
   * that waited QUEUE_WAIT_MS is refused with a line instead (its client may ask again).
   */
  #pump(): void {
    const max = this.#options.maxClients ?? MAX_STATUS_CLIENTS;
    const tooOld = this.#now() - QUEUE_WAIT_MS;
    for (const [socket, sinceMs] of this.#queue) {
      if (sinceMs <= tooOld) {
        this.#queue.delete(socket);
        this.#refuse(socket, 'TOO_MANY_CLIENTS', `the daemon serves ${max} status clients at once; try again`);
        continue;
      }
      if (socket.destroyed) {
        this.#queue.delete(socket);
        continue;
      }
      if (!this.#mayAdmit(max)) break;
      this.#queue.delete(socket);
      this.#admit(socket);
    }
    this.#bound();
    if (this.#queue.size === 0) {
      clearInterval(this.#queueTimer);
      this.#queueTimer = undefined;
    }
  }

  #admit(socket: Socket): void {
    this.#sockets.set(socket, { phase: 'waiting', sinceMs: this.#now() });
    socket.once('close', () => {
      this.#sockets.delete(socket);
      if (this.#queue.size > 0) this.#pump();
    });
    socket.setEncoding('utf8');
    socket.setTimeout(this.#options.requestTimeoutMs ?? 5000, () => socket.destroy());
    let buffer = '';
    const onData = (chunk: string): void => {
      buffer += chunk;
      const nl = buffer.indexOf('\n');
      if (nl < 0) {
        if (buffer.length > MAX_REQUEST_LINE) this.#refuse(socket, 'REQUEST_TOO_LONG', `request longer than ${MAX_REQUEST_LINE} bytes`);
        return;
      }
      socket.off('data', onData);
      socket.setTimeout(0);
      void this.#handle(socket, buffer.slice(0, nl).trim());
    };
    socket.on('data', onData);
    socket.resume();
  }

  /**
   * Makes room: the oldest answered connection still flushing (its client does not read), else
   * the oldest that has not sent its request within EVICT_AFTER_MS. One whose snapshot is being
   * built is answered within that build; fix subscribers are bounded by maxSubscribers instead.
   */
  #evictOne(): boolean {
    let waiting: Socket | undefined;
    const before = this.#now() - EVICT_AFTER_MS;
    for (const [socket, { phase, sinceMs }] of this.#sockets) {
      if (phase === 'flushing') {
        socket.destroy();
        this.#sockets.delete(socket);
        return true;
      }
      if (phase === 'waiting' && sinceMs <= before) waiting ??= socket;
    }
    if (!waiting) return false;
    waiting.destroy();
    this.#sockets.delete(waiting);
    return true;
  }

  async #handle(socket: Socket, line: string): Promise<void> {
    let request: unknown;
    try {
      request = JSON.parse(line) as unknown;
    } catch {
      this.#refuse(socket, 'BAD_REQUEST', 'request is not JSON; send {"get":"status"} or {"subscribe":"fixes"}');
      return;
    }
    const r = (typeof request === 'object' && request !== null ? request : {}) as Record<string, unknown>;
    if (r.get === GET_STATUS.get) {
      this.#phase(socket, 'asked');
      if (!(await this.#pacer.turn(() => !socket.destroyed && socket.readable))) return;
      let answer: string;
      try {
        answer = await this.#snapshots.line();
      } catch (e) {
        this.#options.logger.warn({ err: errorFields(e) }, 'status snapshot failed');
        this.#refuse(socket, 'SNAPSHOT_FAILED', describeError(e));
        return;
      }
      this.#answer(socket, answer);
      return;
    }
    if (r.subscribe === 'fixes' && this.#options.fixes) {
      const subscribers = [...this.#sockets.values()].filter((c) => c.phase === 'subscribed').length;
      const max = this.#options.maxSubscribers ?? MAX_FIX_SUBSCRIBERS;
      if (subscribers >= max) {
        this.#refuse(socket, 'TOO_MANY_CLIENTS', `the daemon feeds ${max} fix subscribers at once; try again`);
        return;
      }
      this.#phase(socket, 'subscribed');
      this.#options.fixes.subscribe(socket);
      return;
    }
    this.#refuse(socket, 'UNKNOWN_REQUEST', 'unknown request; send {"get":"status"} or {"subscribe":"fixes"}');
  }

  #connectionCap(): number {
    return (this.#options.maxClients ?? MAX_STATUS_CLIENTS) + MAX_QUEUED + MAX_STATUS_CLIENTS;
  }

  #phase(socket: Socket, phase: Phase): void {
    const c = this.#sockets.get(socket);
    if (c) c.phase = phase;
  }

  #now(): number {
    return (this.#options.clock ?? systemClock).monotonicMs();
  }

  /**
   * An error line, then end of file. The request may still be unread in the socket (a refusal at
   * accept, a request too long), and closing a Unix socket with unread input resets the peer
   * before it reads the line; so input is drained and the socket half-closed, and it goes after
   * one second at most. Refusals kept that way are bounded like the connections; past that, one
   * is dropped at once.
   */
  #refuse(socket: Socket, code: ErrorCode, message: string): void {
    if (socket.destroyed) return;
    const admitted = this.#sockets.has(socket);
    if (!admitted && this.#refusing.size >= MAX_STATUS_CLIENTS) {
      socket.destroy();
      return;
    }
    if (admitted) this.#phase(socket, 'flushing');
    else {
      this.#refusing.add(socket);
      socket.once('close', () => this.#refusing.delete(socket));
    }
    socket.removeAllListeners('data');
    socket.resume();
    socket.setTimeout(REFUSAL_LINGER_MS, () => socket.destroy());
    socket.end(errorLine(code, message));
  }

  /**
   * Sends the one answer and closes. A Unix socket hands written bytes to the peer's receive
   * queue, so once Node has written them all (nearly always at once: an answer is a few KiB) the
   * connection is closed and the client still reads its answer, then end of file. Only an answer
   * the kernel could not take whole keeps the connection, bounded by lingerMs and by eviction.
   */
  #answer(socket: Socket, line: string): void {
    if (socket.destroyed) return;
    socket.write(line);
    if (socket.writableLength === 0) {
      socket.destroy();
      return;
    }
    this.#phase(socket, 'flushing');
    socket.once('drain', () => socket.destroy());
    socket.setTimeout(this.#options.lingerMs ?? 5000, () => socket.destroy());
  }
}
