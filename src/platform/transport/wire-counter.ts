/**
 * Bytes on the platform sockets, as the SIM card pays for them: counted on the TCP socket under
 * TLS (ciphertext, record headers and handshakes included; IP and TCP headers are not visible
 * to a process and not counted). Added when a socket closes and whenever the counter is read or
 * persisted while sockets are open, so the figure never lags more than a status call.
 *
 * Day and month are those of the host's wall clock in UTC, not of GNSS: these are display
 * counters for the technician (is this gateway eating its data plan?), and a clock that is off
 * only shifts which day a few bytes land on.
 */
import { systemClock, type Clock } from '../../system/clock.js';
import type { Socket } from 'node:net';

export type WireProtocol = 'h2' | 'http/1.1';

export interface WireUsage {
  /** UTC day (YYYY-MM-DD) of the `today` figures. */
  day: string;
  today: { sent: number; received: number };
  /** UTC month (YYYY-MM) of the `month` figures. */
  month: string;
  thisMonth: { sent: number; received: number };
  /** Protocol of the newest platform connection; absent before the first one. */
  protocol?: WireProtocol;
}

export interface WireSnapshot extends WireUsage {
  /** Since this process started. */
  total: { sent: number; received: number };
  /** The same bytes before TLS (HTTP heads, bodies, h2 frames): total minus TLS records and handshakes. */
  plaintext: { sent: number; received: number };
  connections: number;
  /** Connections open now. */
  open: number;
  /** TLS handshakes that resumed a session (no certificate exchange). */
  resumedHandshakes: number;
  fullHandshakes: number;
  /** Bytes both ways up to the end of each kind of handshake (tickets sent after it not included). */
  handshakeBytes: { full: number; resumed: number };
  /** Bytes both ways and connections per origin (bench:wire splits token refreshes from events). */
  byOrigin: Record<string, OriginUsage>;
  /**
   * HTTP/2 request header blocks re-encoded by the header indexer: how many, their bytes as
   * nghttp2 made them (what would have crossed without the indexer) and as sent.
   */
  headerBlocks: { count: number; nghttp2Bytes: number; sentBytes: number };
  /** Origins the header indexer was turned off for in this process (its connections failed because of it). */
  headerIndexerOff: HeaderIndexerOff[];
}

export interface HeaderIndexerOff {
  origin: string;
  reason: string;
  /** Host wall clock (ms). */
  sinceWallMs: number;
}

/** Bytes both ways of one origin's connections, and of their handshakes. */
export interface OriginUsage {
  bytes: number;
  connections: number;
  handshakeBytes: number;
}

/** The meta key the counters are persisted under (with the outbox's minute counters). */
export const WIRE_META_KEY = 'wire.usage';

interface Tracked {
  socket: Socket;
  sent: number;
  received: number;
  /** The TLS socket over `socket`: its own counts are plaintext (bench:wire splits heads from TLS overhead). */
  plain?: Socket;
  plainSent: number;
  plainReceived: number;
  origin: string;
}

export class WireCounter {
  readonly #clock: Pick<Clock, 'wallMs'>;
  readonly #open = new Set<Tracked>();
  #usage: WireUsage;
  #total = { sent: 0, received: 0 };
  #plain = { sent: 0, received: 0 };
  #protocol: WireProtocol | undefined;
  #connections = 0;
  #resumed = 0;
  #full = 0;
  readonly #handshakeBytes = { full: 0, resumed: 0 };
  readonly #byOrigin = new Map<string, OriginUsage>();
  readonly #protocols = new Map<string, WireProtocol>();
  readonly #blocks = { count: 0, nghttp2Bytes: 0, sentBytes: 0 };
  readonly #indexerOff: HeaderIndexerOff[] = [];

  /** `clock`: its wall clock (ms) for the day and month buckets only (default the system's). */
  constructor(clock: Pick<Clock, 'wallMs'> = systemClock) {
    this.#clock = clock;
    this.#usage = emptyUsage(clock.wallMs());
  }

  /** Continues the persisted day and month figures (those of an earlier day or month are dropped). */
  load(saved: WireUsage | undefined): void {
    if (!saved || typeof saved !== 'object') return;
    const fresh = emptyUsage(this.#clock.wallMs());
    const usage: WireUsage = { ...fresh };
    if (saved.day === fresh.day && saved.today) usage.today = { sent: num(saved.today.sent), received: num(saved.today.received) };
    if (saved.protocol === 'h2' || saved.protocol === 'http/1.1') this.#protocol ??= saved.protocol;
    if (saved.month === fresh.month && saved.thisMonth)
      usage.thisMonth = { sent: num(saved.thisMonth.sent), received: num(saved.thisMonth.received) };
    // Bytes counted before load() (none in the daemon: it loads before connecting) stay counted.
    usage.today.sent += this.#usage.day === fresh.day ? this.#usage.today.sent : 0;
    usage.today.received += this.#usage.day === fresh.day ? this.#usage.today.received : 0;
    usage.thisMonth.sent += this.#usage.month === fresh.month ? this.#usage.thisMonth.sent : 0;
    usage.thisMonth.received += this.#usage.month === fresh.month ? this.#usage.thisMonth.received : 0;
    this.#usage = usage;
  }

  /** Counts `socket` (the raw TCP socket) until it closes; `plain`: the TLS socket over it. */
  track(socket: Socket, plain?: Socket, origin = ''): void {
    const t: Tracked = { socket, sent: 0, received: 0, ...(plain ? { plain } : {}), plainSent: 0, plainReceived: 0, origin };
    this.#open.add(t);
    this.#connections++;
    this.#originOf(origin).connections++;
    socket.once('close', () => {
      this.#sample(t);
      this.#open.delete(t);
    });
  }

  /** The TLS (or plain) connection to `origin` is up and speaks `protocol`. */
  /** `handshakeBytes`: both ways on the TCP socket when the handshake finished. */
  negotiated(origin: string, protocol: WireProtocol, resumed: boolean | undefined, handshakeBytes = 0): void {
    this.#protocol = protocol;
    this.#protocols.set(origin, protocol);
    this.#originOf(origin).handshakeBytes += handshakeBytes;
    if (resumed === true) {
      this.#resumed++;
      this.#handshakeBytes.resumed += handshakeBytes;
    } else if (resumed === false) {
      this.#full++;
      this.#handshakeBytes.full += handshakeBytes;
    }
  }

  /** The header indexer re-encoded a block of `nghttp2Bytes` into `sentBytes`. */
  headerBlock(nghttp2Bytes: number, sentBytes: number): void {
    this.#blocks.count++;
    this.#blocks.nghttp2Bytes += nghttp2Bytes;
    this.#blocks.sentBytes += sentBytes;
  }

  /** The dispatcher turned the header indexer off for `origin` (the status note). */
  headerIndexerOff(origin: string, reason: string): void {
    this.#indexerOff.push({ origin, reason, sinceWallMs: this.#clock.wallMs() });
  }

  /** What the last connection to `origin` negotiated; undefined before the first one. */
  protocolOf(origin: string): WireProtocol | undefined {
    return this.#protocols.get(origin);
  }

  snapshot(): WireSnapshot {
    this.#sampleOpen();
    this.#roll();
    return {
      ...structuredClone(this.#usage),
      total: { ...this.#total },
      plaintext: { ...this.#plain },
      ...(this.#protocol ? { protocol: this.#protocol } : {}),
      connections: this.#connections,
      open: this.#open.size,
      resumedHandshakes: this.#resumed,
      fullHandshakes: this.#full,
      handshakeBytes: { ...this.#handshakeBytes },
      byOrigin: Object.fromEntries([...this.#byOrigin].map(([k, v]) => [k, { ...v }])),
      headerBlocks: { ...this.#blocks },
      headerIndexerOff: this.#indexerOff.map((o) => ({ ...o })),
    };
  }

  /** The day and month figures to persist (open sockets sampled first). */
  usage(): WireUsage {
    this.#sampleOpen();
    this.#roll();
    return { ...structuredClone(this.#usage), ...(this.#protocol ? { protocol: this.#protocol } : {}) };
  }

  #sampleOpen(): void {
    for (const t of this.#open) this.#sample(t);
  }

  #sample(t: Tracked): void {
    if (t.plain) {
      this.#plain.sent += Math.max(0, t.plain.bytesWritten - t.plainSent);
      this.#plain.received += Math.max(0, t.plain.bytesRead - t.plainReceived);
      t.plainSent = t.plain.bytesWritten;
      t.plainReceived = t.plain.bytesRead;
    } else {
      this.#plain.sent += Math.max(0, t.socket.bytesWritten - t.sent);
      this.#plain.received += Math.max(0, t.socket.bytesRead - t.received);
    }
    const sent = t.socket.bytesWritten;
    const received = t.socket.bytesRead;
    const ds = sent - t.sent;
    const dr = received - t.received;
    if (ds <= 0 && dr <= 0) return;
    t.sent = sent;
    t.received = received;
    this.#roll();
    const add = (o: { sent: number; received: number }): void => {
      o.sent += Math.max(0, ds);
      o.received += Math.max(0, dr);
    };
    add(this.#total);
    this.#originOf(t.origin).bytes += Math.max(0, ds) + Math.max(0, dr);
    add(this.#usage.today);
    add(this.#usage.thisMonth);
  }

  #originOf(origin: string): OriginUsage {
    let o = this.#byOrigin.get(origin);
    if (!o) {
      o = { bytes: 0, connections: 0, handshakeBytes: 0 };
      this.#byOrigin.set(origin, o);
    }
    return o;
  }

  #roll(): void {
    const now = this.#clock.wallMs();
    const day = new Date(now).toISOString().slice(0, 10);
    if (day === this.#usage.day) return;
    const month = day.slice(0, 7);
    this.#usage = {
      day,
      today: { sent: 0, received: 0 },
      month,
      thisMonth: month === this.#usage.month ? this.#usage.thisMonth : { sent: 0, received: 0 },
    };
  }
}

function emptyUsage(nowMs: number): WireUsage {
  const day = new Date(nowMs).toISOString().slice(0, 10);
  return { day, today: { sent: 0, received: 0 }, month: day.slice(0, 7), thisMonth: { sent: 0, received: 0 } };
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0;
}
