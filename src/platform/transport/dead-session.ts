import type { Dispatcher } from 'undici';

import { RetryBeforeAnswerHandler } from './retry-before-answer.js';

/**
 * Sends a request once more, on a new connection, when undici handed it to an HTTP/2 session that
 * was already destroyed (ERR_HTTP2_INVALID_SESSION: node:http2 refused it before writing a byte).
 * On Node 22 and 24 a connection error fails the session's streams a turn before its socket
 * closes; a request dispatched in that gap (the uploader's retry of the failed one) went to the
 * dead session. Every step otherwise goes to the caller's handler unchanged.
 */
export class DeadSessionRetryHandler extends RetryBeforeAnswerHandler {
  /** `sessionFailed`: told, before the caller, that the request's h2 session failed as a whole. */
  constructor(inner: Dispatcher.DispatchHandler, retry: () => boolean, sessionFailed: () => void) {
    super(
      inner,
      (error) => isDeadSession(error) && retry(),
      // First, so that the caller's retry, dispatched in this same turn, finds a new connection.
      (error) => {
        if (isSessionFailure(error)) sessionFailed();
      },
    );
  }
}

/** node:http2's session.request() on a destroyed session: nothing of the request was sent. */
export function isDeadSession(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'ERR_HTTP2_INVALID_SESSION';
}

/**
 * The session failed as a whole (nghttp2's error on the connection, e.g. a protocol error from a
 * corrupt frame; or already destroyed). On Node 22 a request dispatched before its socket closes
 * is still taken by the dying session and fails the same way, so its Client is replaced at once.
 */
export function isSessionFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ERR_HTTP2_ERROR' || code === 'ERR_HTTP2_INVALID_SESSION';
}
