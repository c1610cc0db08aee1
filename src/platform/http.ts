import { request, type Dispatcher } from 'undici';
import { PlatformError } from '../errors.js';
import type { PlatformResponse } from './contracts.js';
import { errorFromNetwork } from './http-errors.js';

export interface HttpRequest {
  method: 'GET' | 'POST' | 'PUT';
  url: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
  /** For error messages: "token refresh", "device registration". Never a token. */
  what: string;
}

export interface PlatformHttpOptions {
  dispatcher: Dispatcher;
  /** platform.requestTimeoutMs: total deadline for headers and body together. */
  requestTimeoutMs: number;
  /** platform.maxResponseBytes. */
  maxResponseBytes: number;
}

/**
 * One platform HTTP exchange with the hygiene every call needs: a total deadline (undici's body
 * timeout restarts with every chunk, so a slow-drip server could otherwise hold a request for
 * ever), a size cap on the answer, and a 2xx whose body is not JSON (a captive portal, a proxy's
 * HTML page) turned into a transient error instead of a success. Other statuses are returned for
 * the caller to classify (http-errors.ts).
 */
export class PlatformHttp {
  readonly #o: PlatformHttpOptions;

  constructor(options: PlatformHttpOptions) {
    this.#o = options;
  }

  async send(req: HttpRequest): Promise<PlatformResponse> {
    const deadline = AbortSignal.timeout(this.#o.requestTimeoutMs);
    const signal = req.signal ? AbortSignal.any([req.signal, deadline]) : deadline;
    const fail = (e: unknown): never => {
      if (e instanceof PlatformError) throw e;
      if (req.signal?.aborted && !deadline.aborted) throw req.signal.reason ?? e;
      throw errorFromNetwork(e, req.what, req.url, deadline.aborted, this.#o.requestTimeoutMs);
    };
    let res: Dispatcher.ResponseData;
    try {
      res = await request(req.url, {
        dispatcher: this.#o.dispatcher,
        method: req.method,
        headers: { accept: 'application/json', ...(req.headers ?? {}) },
        ...(req.body !== undefined ? { body: req.body } : {}),
        signal,
      });
    } catch (e) {
      return fail(e);
    }
    let text: string;
    try {
      text = await this.#readCapped(res, req);
    } catch (e) {
      // Discard the rest of the answer; a destroyed undici body reports its abort as an 'error'
      // event, which must not become an uncaught exception.
      res.body.on('error', () => undefined);
      res.body.destroy();
      return fail(e);
    }
    const headers = res.headers as Record<string, string | string[] | undefined>;
    const contentType = String(headers['content-type'] ?? '');
    const ok = res.statusCode >= 200 && res.statusCode < 300;
    let body: unknown;
    if (text.trim() !== '' && /\bjson\b/i.test(contentType)) {
      try {
        body = JSON.parse(text) as unknown;
      } catch {
        if (ok) throw notJson(req, res.statusCode, contentType);
      }
    } else if (ok && text.trim() !== '') {
      throw notJson(req, res.statusCode, contentType);
    }
    return { status: res.statusCode, headers, body, text };
  }

  async #readCapped(res: Dispatcher.ResponseData, req: HttpRequest): Promise<string> {
    const max = this.#o.maxResponseBytes;
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && declared > max) throw tooLarge(req, res.statusCode, max);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > max) throw tooLarge(req, res.statusCode, max);
      chunks.push(chunk);
    }
    return Buffer.concat(chunks).toString('utf8');
  }
}

function tooLarge(req: HttpRequest, status: number, max: number): PlatformError {
  return new PlatformError('PLATFORM_RESPONSE_TOO_LARGE', `${req.what}: answer larger than ${max} bytes (platform.maxResponseBytes)`, { class: 'transient', status, details: { status, sent: 'yes' } });
}

function notJson(req: HttpRequest, status: number, contentType: string): PlatformError {
  // Most often a captive portal or a proxy's error page: the request did not reach the platform.
  return new PlatformError('PLATFORM_NOT_JSON', `${req.what}: HTTP ${status} answer is not JSON (content-type "${contentType || 'none'}"); a proxy or captive portal in between?`, {
    class: 'transient',
    status,
    details: { status, contentType, sent: 'maybe' },
  });
}
