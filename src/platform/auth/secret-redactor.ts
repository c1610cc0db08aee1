/**
 * A platform or a proxy that echoes the request in its answer (an error page quoting the
 * form body, a JSON error repeating the Authorization header) must not carry the password or a token
 * into logs, status output, the database (upload.lastError, dead letters) or CLI output. Every answer
 * enters the agent through PlatformHttp.send, which hands its text to this redactor first: one
 * place, so that no consumer of platform text has to remember it.
 *
 * The redactor knows the live secrets: the token manager tells it every access and refresh token it
 * holds (the current pair and the ones before it, which a server may still echo), the token client
 * every password it sends. It is built by the composition root and injected (never a module
 * singleton: two agents in one test process must not see each other's secrets).
 *
 * Besides the plain value it replaces the forms a secret takes on the way out and back: URL-encoded
 * (the form body echoes `password=p%40ss`, spaces as `+` or `%20`), JSON-escaped (with and without
 * `\/`), and HTML-escaped. Anything shaped like a JWT is replaced too, known or not (an old token
 * from before a restart, an id_token).
 */

export const REDACTED = '[redacted]';

/** How many tokens are remembered: the current pair and several before it (a server may echo an old one). */
const TOKEN_CAPACITY = 12;
/** How many passwords: the current one and the one it replaced (a password file fixed in place). */
const PASSWORD_CAPACITY = 2;

/** Three base64url segments starting with a JSON header ("eyJ" = '{"'): a JWT, whoever's it is. */
const JWT_SHAPE = /eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g;

export type SecretKind = 'password' | 'token';

export class SecretRedactor {
  /** Secret value -> its spellings, oldest first (a Map keeps insertion order); passwords apart, so tokens never push them out. */
  readonly #secrets: Record<SecretKind, Map<string, string[]>> = { password: new Map(), token: new Map() };
  readonly #capacity: Record<SecretKind, number> = { password: PASSWORD_CAPACITY, token: TOKEN_CAPACITY };
  /** Every spelling of every secret, longest first (a longer form may contain a shorter one). */
  #forms: string[] = [];

  /** Remembers a secret (a password about to be sent, a token just received or loaded). */
  remember(value: string | undefined, kind: SecretKind = 'token'): void {
    if (value === undefined || value === '') return;
    const secrets = this.#secrets[kind];
    const known = secrets.get(value);
    if (known) {
      // Refresh its place: a secret in use is never the one to forget.
      secrets.delete(value);
      secrets.set(value, known);
      return;
    }
    secrets.set(value, spellings(value));
    while (secrets.size > this.#capacity[kind]) secrets.delete(secrets.keys().next().value as string);
    const all = [...this.#secrets.password.values(), ...this.#secrets.token.values()].flat();
    this.#forms = [...new Set(all)].sort((a, b) => b.length - a.length);
  }

  /** How many secrets it knows (for tests). */
  get size(): number {
    return this.#secrets.password.size + this.#secrets.token.size;
  }

  /** The text with every known secret (in any of its spellings) and every JWT replaced by [redacted]. */
  redact(text: string): string {
    if (text === '') return text;
    let out = text;
    for (const form of this.#forms) if (out.includes(form)) out = out.split(form).join(REDACTED);
    if (out.includes('eyJ')) out = out.replace(JWT_SHAPE, REDACTED);
    return out;
  }
}

/** The ways a secret is spelled in an echo of a form body, a JSON document or an HTML page. */
function spellings(value: string): string[] {
  const forms = new Set<string>([value]);
  const uri = encodeURIComponent(value);
  forms.add(uri);
  forms.add(uri.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()));
  const form = new URLSearchParams({ v: value }).toString().slice(2);
  forms.add(form);
  forms.add(form.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()));
  forms.add(form.replace(/\+/g, '%20'));
  const json = JSON.stringify(value).slice(1, -1);
  forms.add(json);
  forms.add(json.replace(/\//g, '\\/'));
  // Non-ASCII as \uXXXX, as some JSON serializers write it.
  forms.add(json.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
  forms.add(value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;'));
  forms.add(value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&#34;').replace(/'/g, '&#x27;'));
  forms.delete('');
  return [...forms];
}
