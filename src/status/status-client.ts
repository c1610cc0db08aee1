import { connect } from 'node:net';
import { AgentError } from '../errors.js';
import { LineSocket, LineTooLong } from '../socket/line-socket.js';
import { GET_STATUS } from '../socket/status-protocol.js';
import type { StatusSnapshot } from './snapshot.js';

/** Longest snapshot accepted (a full satellite table is a few KiB). */
const MAX_RESPONSE = 1024 * 1024;

/** One attempt's outcome: an answer, a final failure, or "busy: ask again" (refused, evicted, backlog full). */
type Attempt = { snapshot: StatusSnapshot } | { error: AgentError; again: boolean; backlogFull?: boolean };

/**
 * Asks the running daemon for its snapshot. Rejects with DAEMON_NOT_RUNNING when nothing listens
 * (no socket, or a stale one after a crash), so that the caller can fall back to the database.
 *
 * A busy daemon is asked again until `timeoutMs` has passed: when other local clients
 * hold its connections, a new one waits in the daemon's queue; past the queue the daemon closes it
 * at once, a full listen backlog answers EAGAIN, and one queued too long is refused with
 * TOO_MANY_CLIENTS. Each of those says "running, ask again", never "not running".
 */
export async function requestSnapshot(socketPath: string, timeoutMs = 1000): Promise<StatusSnapshot> {
  const deadline = performance.now() + timeoutMs;
  let busy: AgentError | undefined;
  for (let attempt = 0; ; attempt++) {
    const left = deadline - performance.now();
    const outcome = await askOnce(socketPath, Math.max(1, left), timeoutMs);
    if ('snapshot' in outcome) return outcome.snapshot;
    // A last attempt that ran out of the time left after "busy" answers says nothing new: the
    // daemon is running and busy, not silent.
    if (busy && outcome.error.code === 'DAEMON_NOT_ANSWERING') throw busy;
    if (outcome.again) busy = outcome.error;
    // Jittered 10-60 ms, growing a little: a crowd of retrying clients does not come back in step.
    // A full listen backlog is asked again within a few ms: the place frees as soon as the daemon
    // accepts, and costs the daemon nothing until then.
    const pause = outcome.backlogFull ? 1 + Math.random() * 3 : Math.min(60, 10 + attempt * 5) * (0.5 + Math.random() / 2);
    if (!outcome.again || performance.now() + pause >= deadline) throw outcome.error;
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

async function askOnce(socketPath: string, waitMs: number, timeoutMs: number): Promise<Attempt> {
  const socket = connect({ path: socketPath });
  const lines = new LineSocket(socket, MAX_RESPONSE);
  socket.once('connect', () => lines.write(`${JSON.stringify(GET_STATUS)}\n`));
  try {
    // The daemon closes as soon as its answer is written; the answer is read before any error.
    const answer = await lines.next(waitMs);
    if (answer.timedOut)
      return {
        error: new AgentError('DAEMON_NOT_ANSWERING', `the daemon did not answer on ${socketPath} within ${timeoutMs} ms`, {
          class: 'transient',
        }),
        again: false,
      };
    return parseAnswer(answer.line ?? lines.rest, socketPath);
  } catch (e) {
    return failedAttempt(e, socketPath);
  } finally {
    lines.destroy();
  }
}

/** A connection that failed before an answer line: not running, denied, too large, or busy. */
function failedAttempt(e: unknown, socketPath: string): Attempt {
  if (e instanceof LineTooLong)
    return { error: new AgentError('STATUS_TOO_LARGE', 'the daemon sent more than 1 MiB', { class: 'internal' }), again: false };
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'ECONNREFUSED')
    return {
      error: new AgentError('DAEMON_NOT_RUNNING', `no daemon is listening on ${socketPath}`, { class: 'transient', cause: e }),
      again: false,
    };
  if (code === 'EACCES' || code === 'EPERM')
    return {
      error: new AgentError(
        'DAEMON_SOCKET_DENIED',
        `permission denied on ${socketPath}: run as the service user, a member of its group, or root`,
        { class: 'config', cause: e },
      ),
      again: false,
    };
  return {
    error: new AgentError('DAEMON_SOCKET_ERROR', `cannot read ${socketPath}: ${(e as Error).message}`, { class: 'transient', cause: e }),
    // A full listen backlog (EAGAIN) or a connection given to a newer client (ECONNRESET, EPIPE): busy.
    again: code === 'EAGAIN' || code === 'ECONNRESET' || code === 'EPIPE',
    backlogFull: code === 'EAGAIN',
  };
}

/** The daemon's answer line ('' when it closed without a word). */
function parseAnswer(line: string, socketPath: string): Attempt {
  if (line === '')
    // Closed without a word: the daemon gave this connection's place to a newer one before reading it.
    return {
      error: new AgentError('TOO_MANY_CLIENTS', 'the daemon is busy: it closed the connection before answering; try again', {
        class: 'transient',
      }),
      again: true,
    };
  let message: { status?: StatusSnapshot; error?: { code?: string; message?: string } };
  try {
    message = JSON.parse(line) as typeof message;
  } catch {
    return {
      error: new AgentError('DAEMON_BAD_ANSWER', `the daemon's answer on ${socketPath} is not JSON`, { class: 'internal' }),
      again: false,
    };
  }
  if (message.status) return { snapshot: message.status };
  if (message.error?.code === 'TOO_MANY_CLIENTS')
    return {
      error: new AgentError('TOO_MANY_CLIENTS', `the daemon is busy: ${message.error.message ?? 'too many status clients'}`, {
        class: 'transient',
      }),
      again: true,
    };
  return {
    error: new AgentError(
      'DAEMON_STATUS_ERROR',
      `the daemon answered: ${message.error?.code ?? 'error'}: ${message.error?.message ?? ''}`,
      {
        class: 'transient',
      },
    ),
    again: false,
  };
}
