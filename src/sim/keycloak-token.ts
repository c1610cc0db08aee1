import { createHmac, randomUUID } from 'node:crypto';

/**
 * Tokens of the real platform's length and shape (docs/platform-contract.md, Tokens): the token
 * service is a Keycloak realm, and the access token of its published sample response is an RS256
 * JWT of 1,299 characters, whose header carries `kid` and whose payload carries Keycloak's usual
 * claims. A simulator that issued short tokens hid most of a request's cost (every
 * request carries the bearer), so these are built to that size.
 *
 * The signature is a stand-in of the real length (256 bytes, what RS256 with a 2048-bit key gives):
 * HMAC-SHA512 blocks under the simulator's key. Nothing verifies it; the simulator knows its
 * tokens by value. Its bytes are as random as a real signature's, which matters for HPACK's Huffman
 * coding of the bearer.
 */
export type TokenKind = 'Bearer' | 'Refresh' | 'ID';

export interface TokenClaims {
  kind: TokenKind;
  /** The account (preferred_username). */
  username: string;
  /** Keycloak's session id, the same for every token of one password grant. */
  session: string;
  /** Wall clock, seconds. */
  iatS: number;
  ttlS: number;
}

/** The realm URL the sample tokens carry in `iss`. */
const REALM = 'https://auth-service.services.simacan.com/auth/realms/simacan';
const CLIENT = 'simacan-public-api';
/** The key ids of the realm's signing keys (an RS256 key for access and id tokens, an HS512 one for refresh tokens). */
const KID_RSA = 'Wd3qvX0dmNQpTDhOoJ9ZKcD7bLr2sF8yU1xHeA4gMtI';
const KID_HMAC = 'b8b6c2a0-4f1e-4c55-9a7e-3d2f1e0c9b8a';

export function keycloakToken(key: Buffer, c: TokenClaims): string {
  const rsa = c.kind !== 'Refresh';
  const header = { alg: rsa ? 'RS256' : 'HS512', typ: 'JWT', kid: rsa ? KID_RSA : KID_HMAC };
  const sub = subjectOf(c.username);
  const common = {
    exp: c.iatS + c.ttlS,
    iat: c.iatS,
    ...(c.kind === 'Refresh' ? {} : { auth_time: c.iatS }),
    jti: randomUUID(),
    iss: REALM,
  };
  let payload: Record<string, unknown>;
  if (c.kind === 'Refresh') {
    payload = {
      ...common,
      aud: REALM,
      sub,
      typ: 'Refresh',
      azp: CLIENT,
      session_state: c.session,
      scope: 'openid profile email',
      sid: c.session,
    };
  } else {
    const person = personOf(c.username);
    payload = {
      ...common,
      nbf: 0,
      aud: c.kind === 'ID' ? CLIENT : 'account',
      sub,
      typ: c.kind,
      azp: CLIENT,
      session_state: c.session,
      acr: '1',
      ...(c.kind === 'Bearer'
        ? {
            'allowed-origins': ['https://app.simacan.com'],
            resource_access: { account: { roles: ['manage-account', 'view-profile'] } },
            scope: 'openid profile email',
          }
        : { at_hash: createHmac('sha256', key).update(c.session).digest('base64url').slice(0, 22) }),
      name: `${person.given} ${person.family}`,
      preferred_username: c.username,
      given_name: person.given,
      family_name: person.family,
      email: `${c.username}@${person.domain}`,
    };
  }
  const signed = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(payload))}`;
  return `${signed}.${signature(key, signed, rsa ? 256 : 64).toString('base64url')}`;
}

/** A stable UUID-shaped subject per account. */
function subjectOf(username: string): string {
  const h = createHmac('sha256', 'sub').update(username).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

function personOf(username: string): { given: string; family: string; domain: string } {
  const base = username.replace(/[^a-z0-9]/gi, '') || 'user';
  return { given: 'Fleet', family: base, domain: 'carrier.example.com' };
}

/** `bytes` of signature: HMAC-SHA512 blocks over the signed part and a counter. */
function signature(key: Buffer, signed: string, bytes: number): Buffer {
  const blocks: Buffer[] = [];
  for (let i = 0; blocks.length * 64 < bytes; i++) blocks.push(createHmac('sha512', key).update(`${i}.${signed}`).digest());
  return Buffer.concat(blocks).subarray(0, bytes);
}

function b64url(s: string): string {
  return Buffer.from(s, 'utf8').toString('base64url');
}
