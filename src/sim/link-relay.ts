import net, { type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * A cellular link on loopback: a TCP relay in front of the simulator that delays every
 * chunk by half the round-trip time in each direction, optionally limits throughput per direction
 * (bytes/s; chunks queue behind each other) and can stall (nothing moves for a while, as in a
 * tunnel or a cell handover). TLS and HTTP/2 pass through untouched: the agent connects to the
 * relay's port and sees the simulator's certificate. Drain time and live delay measured through it
 * are those of a vehicle, not of loopback.
 */
export interface LinkOptions {
  /** Round-trip time added, ms (half each way). */
  rttMs: number;
  /** Bytes per second per direction; absent: unlimited. */
  bytesPerS?: number;
}

export class LinkRelay {
  readonly #options: LinkOptions;
  #server: Server | undefined;
  readonly #sockets = new Set<Socket>();
  #stalledUntil = 0;
  #rttMs: number;
  /** Bytes relayed each way. */
  readonly bytes = { up: 0, down: 0 };

  constructor(options: LinkOptions) {
    this.#options = options;
    this.#rttMs = options.rttMs;
  }

  /** The round trip from now on (a cellular handover); chunks already on their way keep their time, in order. */
  setRtt(ms: number): void {
    this.#rttMs = ms;
  }

  /** Listens on 127.0.0.1 (a free port) and relays to `target`; resolves with the relay's port. */
  async start(target: { host: string; port: number }): Promise<number> {
    const server = net.createServer((client) => {
      const upstream = net.connect(target.port, target.host);
      client.setNoDelay(true);
      upstream.setNoDelay(true);
      this.#sockets.add(client);
      this.#sockets.add(upstream);
      this.#pipe(client, upstream, 'up');
      this.#pipe(upstream, client, 'down');
      const closeBoth = () => {
        client.destroy();
        upstream.destroy();
        this.#sockets.delete(client);
        this.#sockets.delete(upstream);
      };
      client.on('error', closeBoth);
      upstream.on('error', closeBoth);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.#server = server;
    return (server.address() as AddressInfo).port;
  }

  /** Nothing moves either way for `ms` (chunks wait, in order). */
  stall(ms: number): void {
    this.#stalledUntil = Math.max(this.#stalledUntil, performance.now() + ms);
  }

  async stop(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    this.#sockets.clear();
    const server = this.#server;
    this.#server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  #pipe(from: Socket, to: Socket, dir: 'up' | 'down'): void {
    let lastAt = 0;
    const deliver = (at: number, fn: () => void): void => {
      const when = Math.max(at, lastAt, this.#stalledUntil);
      lastAt = when;
      setTimeout(fn, Math.max(0, when - performance.now()));
    };
    from.on('data', (chunk: Buffer) => {
      const oneWay = this.#rttMs / 2;
      this.bytes[dir] += chunk.length;
      const now = performance.now();
      // Throughput: a chunk leaves after the ones before it have, at bytesPerS.
      const sendMs = this.#options.bytesPerS ? (chunk.length * 1000) / this.#options.bytesPerS : 0;
      deliver(Math.max(now, lastAt - oneWay) + sendMs + oneWay, () => {
        if (!to.destroyed) to.write(chunk);
      });
    });
    from.on('end', () => deliver(performance.now() + this.#rttMs / 2, () => to.end()));
    from.on('close', () => deliver(performance.now() + this.#rttMs / 2, () => to.destroy()));
  }
}
