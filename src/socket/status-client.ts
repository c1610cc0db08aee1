import { connect } from 'node:net';
import { AgentError } from '../errors.js';
import { GET_STATUS } from './status-protocol.js';
import type { StatusSnapshot } from '../status/snapshot.js';

/** Longest snapshot accepted (a full satellite table is a few KiB). */
const MAX_RESPONSE = 1024 * 1024;

/**
 * Asks the running daemon for its snapshot. Rejects with DAEMON_NOT_RUNNING when nothing listens
 * (no socket, or a stale one after a crash), so that the caller can fall back to the database.
 */
export function requestSnapshot(socketPath: string, timeoutMs = 1000): Promise<StatusSnapshot> {
  return new Promise((resolve, reject) => {
    const socket = connect({ path: socketPath });
    let data = '';
    const fail = (e: AgentError): void => {
      socket.destroy();
      reject(e);
    };
    const timer = setTimeout(
      () =>
        fail(
          new AgentError('DAEMON_NOT_ANSWERING', `the daemon did not answer on ${socketPath} within ${timeoutMs} ms`, {
            class: 'transient',
          }),
        ),
      timeoutMs,
    );
    socket.setEncoding('utf8');
    socket.once('connect', () => socket.write(`${JSON.stringify(GET_STATUS)}\n`));
    socket.on('data', (chunk: string) => {
      data += chunk;
      if (data.length > MAX_RESPONSE) fail(new AgentError('STATUS_TOO_LARGE', 'the daemon sent more than 1 MiB', { class: 'internal' }));
    });
    socket.once('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      if (e.code === 'ENOENT' || e.code === 'ECONNREFUSED')
        fail(new AgentError('DAEMON_NOT_RUNNING', `no daemon is listening on ${socketPath}`, { class: 'transient', cause: e }));
      else if (e.code === 'EACCES' || e.code === 'EPERM')
        fail(
          new AgentError(
            'DAEMON_SOCKET_DENIED',
            `permission denied on ${socketPath}: run as the service user, a member of its group, or root`,
            { class: 'config', cause: e },
          ),
        );
      else fail(new AgentError('DAEMON_SOCKET_ERROR', `cannot read ${socketPath}: ${e.message}`, { class: 'transient', cause: e }));
    });
    socket.once('close', () => {
      clearTimeout(timer);
      const line = data.split('\n')[0] ?? '';
      let message: { status?: StatusSnapshot; error?: { code?: string; message?: string } };
      try {
        message = JSON.parse(line) as typeof message;
      } catch {
        reject(new AgentError('DAEMON_BAD_ANSWER', `the daemon's answer on ${socketPath} is not JSON`, { class: 'internal' }));
        return;
      }
      if (message.status) resolve(message.status);
      else if (message.error?.code === 'TOO_MANY_CLIENTS')
        reject(
          new AgentError('TOO_MANY_CLIENTS', `the daemon is busy: ${message.error.message ?? 'too many status clients'}`, {
            class: 'transient',
          }),
        );
      else
        reject(
          new AgentError('DAEMON_STATUS_ERROR', `the daemon answered: ${message.error?.code ?? 'error'}: ${message.error?.message ?? ''}`, {
            class: 'transient',
          }),
        );
    });
  });
}
