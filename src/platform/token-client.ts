import type { Secret } from '../config/secret.js';
import { PlatformError } from '../errors.js';
import type { PlatformResponse } from './contracts.js';
import { statusMeaning } from '../retry/status-table.js';
import { errorFromResponse, mayHaveReachedServer } from './http-errors.js';
import type { PlatformHttp } from './http.js';
import { parseTokenPair, type TokenPair } from './token-pair.js';

/** What one call to the token service came to. */
export type GrantOutcome =
  | { kind: 'pair'; pair: TokenPair }
  /** Spec 2.2: 401 invalid_grant (bad credentials, or an expired refresh token). */
  | { kind: 'rejected'; error: PlatformError }
  /** Anything else: 5xx, 429, network, deadline, HTML. `mayHaveArrived`: the server may have acted on it. */
  | { kind: 'failed'; error: PlatformError; mayHaveArrived: boolean };

/**
 * The two operations of spec 4.1, form-encoded. Holds no state; the TokenManager decides when to
 * call which. Nothing it throws or returns carries a token or the password.
 */
export class TokenClient {
  readonly #http: PlatformHttp;
  readonly #base: string;
  readonly #wallMs: () => number;

  constructor(options: { http: PlatformHttp; authUrl: string; wallMs: () => number }) {
    this.#http = options.http;
    this.#base = options.authUrl.replace(/\/+$/, '');
    this.#wallMs = options.wallMs;
  }

  password(username: string, password: Secret, signal?: AbortSignal): Promise<GrantOutcome> {
    return this.#post('/auth/password', { username, password: password.reveal() }, 'password grant', signal);
  }

  refresh(refreshToken: string, signal?: AbortSignal): Promise<GrantOutcome> {
    return this.#post('/auth/refresh', { refresh_token: refreshToken }, 'token refresh', signal);
  }

  async #post(path: string, fields: Record<string, string>, what: string, signal: AbortSignal | undefined): Promise<GrantOutcome> {
    let res: PlatformResponse;
    try {
      res = await this.#http.send({
        method: 'POST',
        url: `${this.#base}${path}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields).toString(),
        what,
        ...(signal ? { signal } : {}),
      });
    } catch (e) {
      if (!(e instanceof PlatformError)) throw e;
      return { kind: 'failed', error: e, mayHaveArrived: mayHaveReachedServer(e) };
    }
    if (res.status === 200) {
      try {
        return { kind: 'pair', pair: parseTokenPair(res.body, what) };
      } catch (e) {
        return { kind: 'failed', error: e as PlatformError, mayHaveArrived: true };
      }
    }
    const error = errorFromResponse(res, what, this.#wallMs(), 'token');
    // Spec 2.2 says 401 invalid_grant; Keycloak itself answers 400 invalid_grant, so accept both.
    const invalidGrant = res.status === 400 && (res.body as { error?: unknown } | undefined)?.error === 'invalid_grant';
    if (statusMeaning('token', res.status) === 'credentials' || invalidGrant) return { kind: 'rejected', error };
    return { kind: 'failed', error, mayHaveArrived: false };
  }
}
