import type { Secret } from '../../config/secret.js';
import type { Clock } from '../../system/clock.js';
import { PlatformError } from '../../errors.js';
import type { PlatformResponse } from '../contracts.js';
import { statusMeaning } from '../../retry/status-table.js';
import { errorFromResponse, mayHaveReachedServer, plainText } from '../transport/http-errors.js';
import type { PlatformHttp } from '../transport/http.js';
import type { SecretRedactor } from './secret-redactor.js';
import { parseTokenPair, type TokenPair } from './token-pair.js';

/** What one call to the token service came to. */
export type GrantOutcome =
  | { kind: 'pair'; pair: TokenPair }
  /** Spec 2.2: 401 invalid_grant (bad credentials, or an expired refresh token). */
  | { kind: 'rejected'; error: PlatformError }
  /** Anything else: 5xx, 429, network, deadline, HTML. `mayHaveArrived`: the server may have acted on it. */
  | { kind: 'failed'; error: PlatformError; mayHaveArrived: boolean };

/**
 * The two operations of the platform contract (Tokens), form-encoded. Holds no state; the TokenManager decides when to
 * call which. Nothing it throws or returns carries a token or the password.
 */
export class TokenClient {
  readonly #http: PlatformHttp;
  readonly #base: string;
  readonly #clock: Pick<Clock, 'wallMs'>;
  readonly #redactor: SecretRedactor | undefined;

  constructor(options: { http: PlatformHttp; authUrl: string; clock: Pick<Clock, 'wallMs'>; redactor?: SecretRedactor }) {
    this.#http = options.http;
    this.#base = options.authUrl.replace(/\/+$/, '');
    this.#clock = options.clock;
    this.#redactor = options.redactor;
  }

  /** `password` is revealed here, once per attempt: a password file fixed in place is read anew. */
  password(username: string, password: Secret, signal?: AbortSignal): Promise<GrantOutcome> {
    const value = password.reveal();
    // Known to the redactor before it goes out, so that an echo of it in the answer is caught.
    this.#redactor?.remember(value, 'password');
    return this.#post('/auth/password', { username, password: value }, 'password grant', signal);
  }

  refresh(refreshToken: string, signal?: AbortSignal): Promise<GrantOutcome> {
    this.#redactor?.remember(refreshToken);
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
        secretAnswer: true,
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
    // Of an error body only the OAuth fields (platform contract, Tokens) are kept: whatever else a token service or a
    // proxy in front of it writes there may quote the form we sent.
    const oauth = oauthError(res.body);
    const error = errorFromResponse(
      { status: res.status, headers: res.headers, body: oauth, text: '' },
      what,
      this.#clock.wallMs(),
      'token',
    );
    // Spec 2.2 says 401 invalid_grant; Keycloak itself answers 400 invalid_grant, so accept both.
    const invalidGrant = res.status === 400 && oauth.error === 'invalid_grant';
    if (statusMeaning('token', res.status) === 'credentials' || invalidGrant) return { kind: 'rejected', error };
    return { kind: 'failed', error, mayHaveArrived: false };
  }
}

/** Longest OAuth error code and description kept; a real one is a word and a sentence. */
const MAX_OAUTH_CODE = 64;
const MAX_OAUTH_DESCRIPTION = 200;

/**
 * The OAuth error of a token service answer (RFC 6749 5.2, platform contract, Tokens): `error` and
 * `error_description` only, as plain one-line text of bounded length; nothing else survives.
 */
export function oauthError(body: unknown): { error?: string; error_description?: string } {
  const o = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const out: { error?: string; error_description?: string } = {};
  const error = typeof o.error === 'string' ? plainText(o.error, MAX_OAUTH_CODE) : undefined;
  const description = typeof o.error_description === 'string' ? plainText(o.error_description, MAX_OAUTH_DESCRIPTION) : undefined;
  if (error) out.error = error;
  if (description) out.error_description = description;
  return out;
}
