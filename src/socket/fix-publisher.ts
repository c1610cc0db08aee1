import type { Socket } from 'node:net';
import type { Fix } from '../fix/fix.js';
import { encodeLine, fixMessage, SUBSCRIBE_FIXES, SUBSCRIBED_FIXES } from './fix-protocol.js';

/**
 * The daemon side of the fix subscription (protocol: fix-protocol.ts). The daemon's status server
 * hands over a connection whose request line is `{"subscribe":"fixes"}` with `subscribe(socket)`;
 * the GNSS pipeline calls `publish(fix)` for every decoded epoch. A subscriber that cannot keep
 * up is disconnected with an error line rather than letting the daemon buffer without bound.
 */

export interface FixPublisherOptions {
  /** Bytes queued for one subscriber before it counts as stuck. */
  maxQueuedBytes?: number;
}

export function isFixSubscription(request: unknown): boolean {
  return typeof request === 'object' && request !== null && (request as Record<string, unknown>).subscribe === SUBSCRIBE_FIXES.subscribe;
}

export class FixPublisher {
  readonly #subscribers = new Set<Socket>();
  readonly #maxQueued: number;

  constructor(options: FixPublisherOptions = {}) {
    // About 200 fixes (20 s at 10 Hz) beyond what the kernel's socket buffer holds.
    this.#maxQueued = options.maxQueuedBytes ?? 64 * 1024;
  }

  get subscriberCount(): number {
    return this.#subscribers.size;
  }

  subscribe(socket: Socket): void {
    this.#subscribers.add(socket);
    const drop = () => this.#subscribers.delete(socket);
    socket.once('close', drop);
    socket.once('error', drop);
    socket.write(encodeLine(SUBSCRIBED_FIXES));
  }

  publish(fix: Fix): void {
    if (this.#subscribers.size === 0) return;
    const line = encodeLine(fixMessage(fix));
    for (const socket of this.#subscribers) {
      if (socket.destroyed) {
        this.#subscribers.delete(socket);
        continue;
      }
      if (socket.writableLength > this.#maxQueued) {
        // end() alone would keep the queued bytes for as long as the client does not read (400 such
        // subscribers once held 60 MB): one line for a client that is merely slow, then destroy,
        // which frees the buffer.
        this.#subscribers.delete(socket);
        socket.end(encodeLine({ error: { code: 'SLOW_SUBSCRIBER', message: 'the subscriber did not read its fixes; disconnected' } }));
        setTimeout(() => socket.destroy(), 1000).unref();
        continue;
      }
      socket.write(line);
    }
  }

  /** Ends every subscription (daemon stopping). */
  async stop(): Promise<void> {
    const closing = [...this.#subscribers].map(
      (socket) =>
        new Promise<void>((resolve) => {
          socket.once('close', () => resolve());
          socket.end(encodeLine({ error: { code: 'DAEMON_STOPPING', message: 'the daemon is stopping' } }));
          setTimeout(() => socket.destroy(), 1000).unref();
        }),
    );
    this.#subscribers.clear();
    await Promise.all(closing);
  }
}
