import { PlatformError } from '../errors.js';

/** The token pair of spec 2.1 as the agent keeps it. Never logged: see toJSON. */
export interface TokenPair {
  accessToken: string;
  refreshToken: string;
  idToken?: string;
  tokenType: string;
  /** The access token's announced lifetime (spec 2.1: 3600). */
  expiresInS: number;
}

/** Spec 2.1: expires_in is 3600; used when the answer lacks a usable value. */
export const DEFAULT_EXPIRES_IN_S = 3600;

/** Reads a 200 answer of either token operation; a malformed pair is a transient platform fault. */
export function parseTokenPair(body: unknown, what: string): TokenPair {
  const o = body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  const missing = ['access_token', 'refresh_token'].filter((k) => typeof o[k] !== 'string' || o[k] === '');
  if (missing.length > 0) {
    // Names of the fields only: the body itself may hold a token.
    throw new PlatformError('TOKEN_PAIR_MALFORMED', `${what}: answer lacks ${missing.join(' and ')}`, { class: 'transient', status: 200 });
  }
  const expiresIn =
    typeof o.expires_in === 'number' && Number.isFinite(o.expires_in) && o.expires_in > 0
      ? o.expires_in
      : typeof o.expires_in === 'string' && Number(o.expires_in) > 0
        ? Number(o.expires_in)
        : DEFAULT_EXPIRES_IN_S;
  return {
    accessToken: o.access_token as string,
    refreshToken: o.refresh_token as string,
    ...(typeof o.id_token === 'string' ? { idToken: o.id_token } : {}),
    tokenType: typeof o.token_type === 'string' ? o.token_type : 'bearer',
    expiresInS: expiresIn,
  };
}
