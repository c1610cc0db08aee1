import type { Logger } from '../../log.js';
import type { AuthorizedRequester, PlatformRequest, PlatformResponse } from '../contracts.js';
import type { PlatformHttp } from '../transport/http.js';
import type { TokenManager } from './token-manager.js';
import { urlParts } from '../transport/url-parts.js';

/**
 * AuthorizedRequester (contracts.ts): the bearer of the platform contract (Tokens) on every request; on a 401, one
 * refresh through the token manager (single flight, also across processes) and one retry
 * (platform contract, Tokens). A second 401 is returned to the caller, never looped on.
 */
export class AuthorizedClient implements AuthorizedRequester {
  readonly #http: PlatformHttp;
  readonly #tokens: TokenManager;
  readonly #logger: Logger;

  constructor(options: { http: PlatformHttp; tokens: TokenManager; logger: Logger }) {
    this.#http = options.http;
    this.#tokens = options.tokens;
    this.#logger = options.logger;
  }

  async send(request: PlatformRequest): Promise<PlatformResponse> {
    const first = await this.#tokens.accessToken(request.signal);
    const res = await this.#once(request, first.token);
    if (res.status !== 401) return res;
    this.#logger.debug(
      { method: request.method, path: pathOf(request.url), generation: first.generation },
      'service answered 401: refreshing the token and retrying once',
    );
    const second = await this.#tokens.renewAfterUnauthorized(first.generation, request.signal);
    return this.#once(request, second.token);
  }

  #once(request: PlatformRequest, token: string): Promise<PlatformResponse> {
    request.onSend?.();
    const headers: Record<string, string> = { ...request.headers, authorization: `Bearer ${token}` };
    if (request.json !== undefined) headers['content-type'] = 'application/json';
    return this.#http.send({
      method: request.method,
      url: request.url,
      headers,
      ...(request.json !== undefined ? { body: JSON.stringify(request.json) } : {}),
      ...(request.signal ? { signal: request.signal } : {}),
      ...(request.idempotent ? { idempotent: true } : {}),
      ...(request.answerBodyOptional ? { answerBodyOptional: true } : {}),
      what: `${request.method} ${pathOf(request.url)}`,
    });
  }
}

function pathOf(url: string): string {
  try {
    return urlParts(url).pathname;
  } catch {
    return url;
  }
}
