import { connect, type Socket } from 'node:net';
import { AgentError } from '../errors.js';
import type { Fix } from '../fix/fix.js';
import type { FixFeed } from './fix-feed.js';
import { encodeLine, MAX_PROTOCOL_LINE, parseFix, SUBSCRIBE_FIXES, SUBSCRIBED_FIXES } from '../socket/fix-protocol.js';
import { LineSocket } from '../socket/line-socket.js';

/**
 * Fixes from the running daemon over its status socket (protocol: src/socket/fix-protocol.ts). Used by
 * `location here` while the daemon holds the serial port: opening the port a second time would
 * split the receiver's bytes between two readers and corrupt both streams.
 */

export interface DaemonFixFeedOptions {
  socketPath: string;
  /** How long the daemon may take to acknowledge the subscription. */
  ackTimeoutMs?: number;
}

export class DaemonFixFeed implements FixFeed {
  readonly #options: DaemonFixFeedOptions;

  constructor(options: DaemonFixFeedOptions) {
    this.#options = options;
  }

  get description(): string {
    return `the running daemon (${this.#options.socketPath})`;
  }

  async *fixes(signal: AbortSignal): AsyncGenerator<Fix> {
    const socket = await openSocket(this.#options.socketPath);
    const lines = new LineSocket(socket, MAX_PROTOCOL_LINE);
    const onAbort = () => lines.destroy();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      if (signal.aborted) return;
      lines.write(encodeLine(SUBSCRIBE_FIXES));
      const ack = await lines.next(this.#options.ackTimeoutMs ?? 10_000);
      const first = ack.line === undefined ? undefined : safeParse(ack.line);
      if (!isAck(first)) {
        const said = errorOf(first);
        const why = ack.timedOut
          ? 'it did not answer the fix subscription'
          : said
            ? `it answered: ${said}`
            : ack.line === undefined
              ? 'it closed the connection'
              : 'it does not know the fix subscription';
        throw new AgentError(
          'DAEMON_NO_FIXES',
          `the running daemon cannot serve fixes (${why}); it holds the receiver, so stop it first (systemctl stop telematics-agent) and run the command again, or update the agent`,
          { class: 'config', retryable: false },
        );
      }
      for (;;) {
        const next = await lines.next();
        if (next.line === undefined) {
          if (signal.aborted) return;
          throw new AgentError('DAEMON_FEED_CLOSED', 'the running daemon closed the fix subscription (is it stopping?)', {
            class: 'transient',
          });
        }
        const message = safeParse(next.line);
        const said = errorOf(message);
        if (said)
          throw new AgentError('DAEMON_FEED_ERROR', `the running daemon ended the fix subscription: ${said}`, { class: 'transient' });
        if (typeof message === 'object' && message !== null && 'fix' in message) {
          const fix = parseFix((message as { fix: unknown }).fix);
          if (fix) yield fix;
        }
      }
    } catch (e) {
      if (signal.aborted) return;
      throw e;
    } finally {
      signal.removeEventListener('abort', onAbort);
      lines.destroy();
    }
  }
}

/**
 * Whether a daemon is listening on the socket (connect succeeds). ENOENT/ECONNREFUSED (a stale
 * socket file after a crash) mean no daemon; any other failure is reported, not guessed.
 */
export async function isDaemonListening(socketPath: string): Promise<boolean> {
  try {
    const socket = await openSocket(socketPath);
    socket.destroy();
    return true;
  } catch (e) {
    if (e instanceof AgentError && e.code === 'DAEMON_NOT_RUNNING') return false;
    throw e;
  }
}

function openSocket(socketPath: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ path: socketPath });
    socket.once('connect', () => {
      socket.removeAllListeners('error');
      resolve(socket);
    });
    socket.once('error', (e: NodeJS.ErrnoException) => {
      socket.destroy();
      if (e.code === 'ENOENT' || e.code === 'ECONNREFUSED')
        reject(new AgentError('DAEMON_NOT_RUNNING', `no daemon is listening on ${socketPath}`, { class: 'transient', cause: e }));
      else if (e.code === 'EACCES')
        reject(
          new AgentError('DAEMON_SOCKET_DENIED', `permission denied on ${socketPath}: run as the service user (or root)`, {
            class: 'config',
            retryable: false,
            cause: e,
          }),
        );
      else reject(new AgentError('DAEMON_SOCKET_ERROR', `cannot connect to ${socketPath}: ${e.message}`, { class: 'transient', cause: e }));
    });
  });
}

function safeParse(line: string): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return undefined;
  }
}

function isAck(m: unknown): boolean {
  return typeof m === 'object' && m !== null && (m as Record<string, unknown>).subscribed === SUBSCRIBED_FIXES.subscribed;
}

function errorOf(m: unknown): string | undefined {
  if (typeof m !== 'object' || m === null) return undefined;
  const e = (m as Record<string, unknown>).error;
  if (typeof e === 'string') return e;
  if (typeof e === 'object' && e !== null) {
    const { code, message } = e as Record<string, unknown>;
    return [code, message].filter((x) => typeof x === 'string').join(': ') || undefined;
  }
  return undefined;
}
