import { randomBytes, randomUUID } from 'node:crypto';
import type { Clock } from '../system/clock.js';
import { json, type Reply } from './http-io.js';
import { keycloakToken, type TokenKind } from './keycloak-token.js';
import type { Random } from './random.js';
import type { SimStats } from './stats.js';

/** An account of the simulated platform. `carriers` limits the carrier codes it may register (403 otherwise); absent = all. */
export interface SimUser {
  username: string;
  password: string;
  carriers?: string[];
}

export interface TokenServiceOptions {
  users: SimUser[];
  /** Access token lifetime announced in expires_in (platform contract, Tokens: 3600). */
  accessTtlS: number;
  /** Refresh token lifetime from its issue; every refresh issues a new one (Keycloak's idle timeout). */
  refreshTtlS: number;
  /** Fraction (0..1) of access tokens that stop working long before expires_in (platform contract, Tokens: "or earlier in rare cases"). */
  earlyExpiryFraction: number;
  /** Absolute session lifetime from the password grant (Keycloak's SSO max); absent = unlimited. */
  sessionMaxS?: number;
  clock: Clock;
  random: Random;
  stats: SimStats;
}

interface AccessRecord {
  username: string;
  expiresAtMs: number;
}

interface RefreshRecord {
  username: string;
  session: string;
  expiresAtMs: number;
  sessionEndsAtMs: number;
  /** 'rotated' once it was exchanged: presenting it again is a reuse (platform contract, Tokens). */
  state: 'valid' | 'rotated';
}

/**
 * A hostile token answer: a 200 whose pair is not fit to use. Applied to the next
 * `limit` successful answers of either grant (default: until cleared). The pair is issued as usual,
 * so a client that does use it is served (the sim records the token as answered, suffix included).
 */
export interface TokenAnswerFault {
  /** Replaces expires_in with any JSON value (0.001, "1e999", -5, null). */
  expiresIn?: unknown;
  /** Spliced into the JSON text as expires_in verbatim, for numbers JSON.stringify cannot write (1e999). */
  expiresInLiteral?: string;
  /** Appended to the access / refresh token (a newline, a space, a quote). */
  accessTokenSuffix?: string;
  refreshTokenSuffix?: string;
  /** Apply to this many answers, then clear itself. */
  limit?: number;
}

const LITERAL_PLACEHOLDER = '"__expires_in_literal__"';

/**
 * The token service of the platform contract (Tokens): password and refresh grants, form-encoded, tokens of the real
 * platform's length and shape (keycloak-token.ts), rotation of the refresh token on every
 * refresh. Lifetimes run on the injected clock's monotonic time so that tests can move time by hand.
 */
export class SimTokenService {
  readonly #options: TokenServiceOptions;
  readonly #users = new Map<string, SimUser>();
  readonly #access = new Map<string, AccessRecord>();
  readonly #refresh = new Map<string, RefreshRecord>();
  readonly #key = randomBytes(32);
  #answerFault: (TokenAnswerFault & { used: number }) | undefined;
  /** Every token ever issued, so that tests can search logs and files for them. */
  readonly #issued: string[] = [];

  constructor(options: TokenServiceOptions) {
    this.#options = options;
    for (const u of options.users) this.#users.set(u.username, u);
  }

  user(username: string): SimUser | undefined {
    return this.#users.get(username);
  }

  /** Every access, refresh and id token issued so far, in order. */
  issuedTokens(): string[] {
    return [...this.#issued];
  }

  /** Makes the next successful answers hostile (see TokenAnswerFault); undefined clears. */
  setAnswerFault(fault: TokenAnswerFault | undefined): void {
    if (fault?.expiresInLiteral !== undefined && !/^[-+0-9.eE]+$/.test(fault.expiresInLiteral))
      throw new RangeError('expiresInLiteral must be a number literal such as 1e999');
    this.#answerFault = fault === undefined || Object.keys(fault).length === 0 ? undefined : { ...fault, used: 0 };
  }

  get answerFault(): TokenAnswerFault | undefined {
    if (!this.#answerFault) return undefined;
    const { used: _used, ...fault } = this.#answerFault;
    return fault;
  }

  /** Adds a user or changes a password (a rotated credential in a test). */
  setUser(user: SimUser): void {
    this.#users.set(user.username, user);
  }

  password(form: URLSearchParams): Reply {
    const username = form.get('username');
    const password = form.get('password');
    if (!username || password === null) return invalidRequest(`Missing form parameter: ${!username ? 'username' : 'password'}`);
    const user = this.#users.get(username);
    if (!user || user.password !== password) {
      this.#options.stats.passwordRejected += 1;
      return invalidGrant('Invalid user credentials');
    }
    this.#options.stats.passwordGrants += 1;
    const now = this.#options.clock.monotonicMs();
    const sessionEndsAtMs = this.#options.sessionMaxS === undefined ? Number.POSITIVE_INFINITY : now + this.#options.sessionMaxS * 1000;
    return this.#answer(this.#issue(username, randomUUID(), sessionEndsAtMs));
  }

  refresh(form: URLSearchParams): Reply {
    const token = form.get('refresh_token');
    if (!token) return invalidRequest('Missing form parameter: refresh_token');
    const record = this.#refresh.get(token);
    const now = this.#options.clock.monotonicMs();
    if (!record) {
      this.#options.stats.refreshUnknown += 1;
      return invalidGrant('Invalid refresh token');
    }
    if (record.state === 'rotated') {
      this.#options.stats.refreshReuses += 1;
      return invalidGrant('Stale token');
    }
    if (now >= record.expiresAtMs || now >= record.sessionEndsAtMs) {
      this.#options.stats.refreshExpired += 1;
      this.#refresh.delete(token);
      return invalidGrant('Token is not active');
    }
    record.state = 'rotated';
    this.#options.stats.refreshes += 1;
    return this.#answer(this.#issue(record.username, record.session, record.sessionEndsAtMs));
  }

  /** The user a bearer token belongs to, or undefined when it is unknown or expired. */
  authenticate(bearer: string | undefined): SimUser | undefined {
    if (bearer === undefined) return undefined;
    const record = this.#access.get(bearer);
    if (!record) return undefined;
    if (this.#options.clock.monotonicMs() >= record.expiresAtMs) {
      this.#access.delete(bearer);
      return undefined;
    }
    return this.#users.get(record.username);
  }

  /** Makes every issued access token invalid now (services answer 401). */
  expireAccessTokens(): void {
    this.#access.clear();
  }

  /** Makes every valid refresh token expired now (the next refresh answers 401). */
  expireRefreshTokens(): void {
    const now = this.#options.clock.monotonicMs();
    for (const r of this.#refresh.values()) r.expiresAtMs = Math.min(r.expiresAtMs, now);
  }

  /** The 200 answer of a grant, made hostile while an answer fault is set. */
  #answer(pair: Record<string, unknown>): Reply {
    const f = this.#answerFault;
    if (!f) return json(200, pair);
    f.used += 1;
    if (f.limit !== undefined && f.used >= f.limit) this.#answerFault = undefined;
    this.#options.stats.hostileTokenAnswers += 1;
    const access = String(pair.access_token);
    const refresh = String(pair.refresh_token);
    const out = { ...pair };
    if (f.accessTokenSuffix !== undefined) {
      out.access_token = access + f.accessTokenSuffix;
      const record = this.#access.get(access);
      if (record) this.#access.set(String(out.access_token), record);
    }
    if (f.refreshTokenSuffix !== undefined) {
      out.refresh_token = refresh + f.refreshTokenSuffix;
      const record = this.#refresh.get(refresh);
      if (record) this.#refresh.set(String(out.refresh_token), record);
    }
    if ('expiresIn' in f) out.expires_in = f.expiresIn;
    if (f.expiresInLiteral === undefined) return json(200, out);
    out.expires_in = '__expires_in_literal__';
    return {
      status: 200,
      raw: { contentType: 'application/json', text: JSON.stringify(out).replace(LITERAL_PLACEHOLDER, f.expiresInLiteral) },
    };
  }

  /**
   * Both grants answer with three tokens, as Keycloak does for a session opened with the `openid`
   * scope (the sample response's id_token): the refresh grant too ("three tokens down").
   */
  #issue(username: string, session: string, sessionEndsAtMs: number): Record<string, unknown> {
    const o = this.#options;
    const now = o.clock.monotonicMs();
    const ttlMs = o.accessTtlS * 1000;
    // Early expiry: a token that dies somewhere between 10% and 50% of its announced lifetime.
    const early = o.earlyExpiryFraction > 0 && o.random() < o.earlyExpiryFraction;
    const accessLifeMs = early ? Math.max(1, Math.round(ttlMs * (0.1 + 0.4 * o.random()))) : ttlMs;
    if (early) o.stats.earlyExpiries += 1;
    const access = this.#jwt(username, 'Bearer', o.accessTtlS, session);
    const refresh = this.#jwt(username, 'Refresh', o.refreshTtlS, session);
    this.#access.set(access, { username, expiresAtMs: now + accessLifeMs });
    this.#refresh.set(refresh, { username, session, expiresAtMs: now + o.refreshTtlS * 1000, sessionEndsAtMs, state: 'valid' });
    const pair: Record<string, unknown> = { access_token: access, refresh_token: refresh, token_type: 'bearer', expires_in: o.accessTtlS };
    pair.id_token = this.#jwt(username, 'ID', o.accessTtlS, session);
    this.#issued.push(access, refresh, String(pair.id_token));
    return pair;
  }

  #jwt(username: string, kind: TokenKind, ttlS: number, session: string): string {
    const iatS = Math.floor(this.#options.clock.wallMs() / 1000);
    return keycloakToken(this.#key, { kind, username, session, iatS, ttlS });
  }
}

/** Spec 2.2: the 401 body of both token operations. */
function invalidGrant(description: string): Reply {
  return json(401, { error: 'invalid_grant', error_description: description });
}

function invalidRequest(description: string): Reply {
  return json(400, { error: 'invalid_request', error_description: description });
}
