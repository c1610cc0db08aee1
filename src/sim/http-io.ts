import type { IncomingMessage, ServerResponse } from 'node:http';

/** Small helpers for the simulator's handlers: bounded body reading and JSON answers. */

/** Requests larger than this are refused with 413 (the platform's limits are not published). */
export const MAX_REQUEST_BYTES = 1024 * 1024;

export class RequestTooLarge extends Error {}

export async function readBody(req: IncomingMessage, limit = MAX_REQUEST_BYTES): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new RequestTooLarge(`request body over ${limit} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export interface Reply {
  status: number;
  /** Serialised as JSON unless `raw` is set. */
  body?: unknown;
  /** A literal body with its content type (HTML error pages, plain text). */
  raw?: { contentType: string; text: string };
  headers?: Record<string, string>;
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Reply {
  return { status, body, headers };
}

export function encodeReply(reply: Reply): { headers: Record<string, string>; payload: Buffer } {
  const headers: Record<string, string> = { ...(reply.headers ?? {}) };
  let payload: Buffer;
  if (reply.raw) {
    headers['content-type'] = reply.raw.contentType;
    payload = Buffer.from(reply.raw.text, 'utf8');
  } else if (reply.body === undefined) {
    payload = Buffer.alloc(0);
  } else {
    headers['content-type'] = 'application/json';
    payload = Buffer.from(JSON.stringify(reply.body), 'utf8');
  }
  // RFC 9110 8.6: no Content-Length in a 204.
  if (reply.status !== 204) headers['content-length'] = String(payload.length);
  return { headers, payload };
}

/** Sends the whole reply at once, or one byte every `dripMs` (a slow-drip server). */
export function sendReply(res: ServerResponse, reply: Reply, dripMs?: number): void {
  const { headers, payload } = encodeReply(reply);
  // Connection-specific headers are forbidden in HTTP/2 (RFC 9113 8.2.2); the stream just ends.
  if ((res.req as IncomingMessage | undefined)?.httpVersionMajor === 2) delete headers.connection;
  res.writeHead(reply.status, headers);
  if (!dripMs || payload.length === 0) {
    res.end(payload);
    return;
  }
  let i = 0;
  const tick = (): void => {
    if (res.destroyed) return;
    if (i >= payload.length) {
      res.end();
      return;
    }
    res.write(payload.subarray(i, i + 1));
    i += 1;
    setTimeout(tick, dripMs).unref();
  };
  tick();
}

/** Parses an application/x-www-form-urlencoded body; undefined when the content type is wrong. */
export function parseForm(req: IncomingMessage, body: string): URLSearchParams | undefined {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') return undefined;
  return new URLSearchParams(body);
}

/** Parses a JSON body; `{ ok: false }` when it is not JSON. */
export function parseJson(body: string): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: JSON.parse(body) as unknown };
  } catch (e) {
    return { ok: false, message: (e as Error).message };
  }
}

export function bearerOf(req: IncomingMessage): string | undefined {
  const h = req.headers.authorization;
  if (typeof h !== 'string') return undefined;
  const m = /^Bearer\s+(\S+)$/i.exec(h.trim());
  return m?.[1];
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
