import { PlatformError } from '../../errors.js';

/** The token pair of the platform contract (Tokens) as the agent keeps it. Never logged: see toJSON. */
export interface TokenPair {
  accessToken: string;
  refreshToken: string;
  idToken?: string;
  tokenType: string;
  /** The access token's announced lifetime (platform contract, Tokens: 3600), clamped to [MIN_EXPIRES_IN_S, MAX_EXPIRES_IN_S]. */
  expiresInS: number;
}

/** Spec 2.1: expires_in is 3600; used when the answer has none. */
export const DEFAULT_EXPIRES_IN_S = 3600;
/**
 * A lifetime of 0.001 s made 139 refreshes in 10 s; one of 1e999 made a token that was
 * never refreshed. A minute at least (the refresh margin is a tenth of the lifetime, so a refresh
 * every 54 s at worst), a day at most (the refresh token's own lifetime, docs/platform-contract.md).
 */
export const MIN_EXPIRES_IN_S = 60;
export const MAX_EXPIRES_IN_S = 86_400;
/** A bearer token goes into every request's Authorization header; beyond this it is no token. */
export const MAX_TOKEN_LENGTH = 16_384;

/**
 * RFC 6750 2.1 b64token: the only characters a bearer token may have. A newline in a token made
 * every request fail as a "connection failure" (the header is refused) until it expired, and it
 * survived restarts in the database.
 */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

function malformed(what: string, problem: string): PlatformError {
  // Names of the fields only, never their values: the answer itself may hold a token.
  return new PlatformError('TOKEN_PAIR_MALFORMED', `${what}: answer ${problem}; not used, tried again later`, {
    class: 'transient',
    status: 200,
    details: { status: 200, sent: 'yes' },
  });
}

/** Why `token` is no bearer token, or undefined when it is one. */
export function tokenProblem(token: unknown): string | undefined {
  if (typeof token !== 'string' || token === '') return 'is missing';
  if (token.length > MAX_TOKEN_LENGTH) return `is longer than ${MAX_TOKEN_LENGTH} characters`;
  if (!B64TOKEN.test(token)) return 'has characters a bearer token may not have (RFC 6750 b64token)';
  return undefined;
}

/** expires_in as seconds within [60, 86400], or an error for anything that is not a finite number. */
function expiresIn(v: unknown, what: string): number {
  if (v === undefined || v === null) return DEFAULT_EXPIRES_IN_S;
  let n: number;
  if (typeof v === 'number') n = v;
  else if (typeof v === 'string' && /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(v)) n = Number(v);
  else throw malformed(what, 'has an expires_in that is not a number');
  if (!Number.isFinite(n)) throw malformed(what, 'has an expires_in that is not a finite number');
  return Math.min(MAX_EXPIRES_IN_S, Math.max(MIN_EXPIRES_IN_S, n));
}

/**
 * Reads a 200 answer of either token operation. A pair that is not fit to use (missing or
 * malformed tokens, a lifetime that is no finite number) is TOKEN_PAIR_MALFORMED: a transient
 * platform fault, retried at the token service's backoff and never stored.
 */
export function parseTokenPair(body: unknown, what: string): TokenPair {
  const o = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  for (const field of ['access_token', 'refresh_token'] as const) {
    const problem = tokenProblem(o[field]);
    if (problem) throw malformed(what, `${field} ${problem}`);
  }
  const expiresInS = expiresIn(o.expires_in, what);
  return {
    accessToken: o.access_token as string,
    refreshToken: o.refresh_token as string,
    // The id token is not used; one that is no clean token is left out rather than kept.
    ...(tokenProblem(o.id_token) === undefined ? { idToken: o.id_token as string } : {}),
    tokenType: typeof o.token_type === 'string' && /^[A-Za-z]{1,32}$/.test(o.token_type) ? o.token_type : 'bearer',
    expiresInS,
  };
}

/**
 * The same checks for a pair read back from the database (written by an older version, or damaged):
 * the pair to use, with its lifetime clamped, or why it may not be used. A bad lifetime alone does
 * not cost the refresh token (platform contract, Tokens: the password only after the refresh answered 401).
 */
export function checkStoredPair(pair: TokenPair): { ok: true; pair: TokenPair } | { ok: false; problem: string } {
  const access = tokenProblem(pair.accessToken);
  if (access) return { ok: false, problem: `access token ${access}` };
  const refresh = tokenProblem(pair.refreshToken);
  if (refresh) return { ok: false, problem: `refresh token ${refresh}` };
  const life = Number.isFinite(pair.expiresInS)
    ? Math.min(MAX_EXPIRES_IN_S, Math.max(MIN_EXPIRES_IN_S, pair.expiresInS))
    : MIN_EXPIRES_IN_S;
  const { idToken, ...rest } = pair;
  return { ok: true, pair: { ...rest, ...(tokenProblem(idToken) === undefined ? { idToken } : {}), expiresInS: life } };
}
