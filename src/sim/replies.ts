/** The simulator's answers that do not depend on its state: faults, 401, the echo of a careless proxy. */
import type { IncomingMessage } from 'node:http';
import { json, type Reply } from './http-io.js';

export function dropConnection(req: IncomingMessage): void {
  const stream = (req as unknown as { stream?: { session?: { destroy(): void } } }).stream;
  // An HTTP/2 session's socket is a proxy that throws when touched; destroying the session destroys it.
  if (stream?.session) stream.session.destroy();
  else req.socket.destroy();
}

type H2Stream = { id: number; close(code: number): void; session?: { goaway(code: number, lastStreamId: number): void; close(): void } };

/**
 * Faults resetStream and goAway: on HTTP/2, RST_STREAM with `code` on this request's stream, or
 * GOAWAY with `code` and a last stream id below this one (the request was not processed), then
 * the session closes once its other streams are done. On HTTP/1.1, which has neither, the
 * connection is dropped.
 */
export function refuseStream(req: IncomingMessage, kind: 'resetStream' | 'goAway', code: number): void {
  const stream = (req as unknown as { stream?: H2Stream }).stream;
  if (!stream?.session) {
    req.socket.destroy();
    return;
  }
  if (kind === 'resetStream') {
    stream.close(code);
    return;
  }
  // Client streams have odd ids: the one before this was the last the server took.
  stream.session.goaway(code, Math.max(0, stream.id - 2));
  stream.close(HTTP2_REFUSED_STREAM);
  stream.session.close();
}

const HTTP2_REFUSED_STREAM = 7;

export function unauthorized(): Reply {
  return json(
    401,
    { status: 401, error: 'Unauthorized', message: 'bearer token missing, unknown or expired' },
    { 'www-authenticate': 'Bearer error="invalid_token"' },
  );
}

/** An error answer that quotes the request back (fault `echo`): what a careless proxy or debug page does. */
export function echoReply(req: IncomingMessage, body: string, status: number, format: 'json' | 'text'): Reply {
  const authorization = String(req.headers.authorization ?? '');
  const quoted = `${req.method} ${req.url} authorization=${authorization} body=${body}`;
  if (format === 'text') return { status, raw: { contentType: 'text/plain; charset=utf-8', text: `request refused: ${quoted}` } };
  return json(status, {
    error: 'invalid_request',
    error_description: `request refused: ${body}`,
    message: `request refused: ${quoted}`,
    request: { body, authorization },
    errors: [{ field: 'body', message: body }],
  });
}

/** The id of an event request body, '' when it has none. */
export function eventIdOf(body: string): string {
  try {
    const id = (JSON.parse(body) as { id?: unknown }).id;
    return typeof id === 'string' ? id : '';
  } catch {
    return '';
  }
}

/** An OTM5 error object (docs/platform-contract.md: 400 is an array of {type, message, field}). */
export function refusedEventField(): Record<string, string> {
  return { type: 'invalidField', message: 'the platform does not accept this value', field: 'geoReference.lat' };
}

export function faultReply(status: number, retryAfterS: number | undefined): Reply {
  switch (status) {
    case 400:
      return json(400, [refusedEventField()]);
    case 500:
      // The OTM5 API documents its 500 body as a string.
      return json(500, 'Internal Server Error');
    case 503:
      return {
        status: 503,
        raw: {
          contentType: 'text/html',
          text: '<html><head><title>503 Service Temporarily Unavailable</title></head><body><center><h1>503 Service Temporarily Unavailable</h1></center></body></html>',
        },
      };
    case 429:
      return json(429, { status: 429, error: 'Too Many Requests' }, { 'retry-after': String(retryAfterS ?? 1) });
    case 401:
      return unauthorized();
    default:
      return json(status, { status, error: `HTTP ${status}`, message: 'answered by the fault injection (a wrong path, a proxy, ...)' });
  }
}

/** Fault `oversizedAnswer`: the 2xx answer as 200, its entity (or an empty object) padded to `bytes` of JSON. */
export function paddedReply(reply: Reply, bytes: number): Reply {
  const entity = typeof reply.body === 'object' && reply.body !== null && !Array.isArray(reply.body) ? reply.body : {};
  const base = JSON.stringify({ ...entity, padding: '' }).length;
  return json(200, { ...entity, padding: 'x'.repeat(Math.max(0, bytes - base)) });
}
