/**
 * TLS session tickets kept across restarts ("say what you measured across a restart").
 *
 * Without them every start pays one full handshake per platform origin (token service, device
 * service, planning host): the server's certificate chain each time (bench:wire prints the bytes).
 * With them the first connections of a new process resume, as long as the server still takes
 * the ticket (its own lifetime, at most 7 days by RFC 8446; OpenSSL does not offer a ticket past
 * the lifetime the server gave it).
 *
 * A ticket is key material: the resumption secret of a session. It lives in `agent.db` (mode 0600
 * in a 0700 directory, beside the token pair, which is worth more), is never logged (only counts
 * are), and is discarded when
 * - the trusted roots changed (platform.caFile edited or removed, a node upgrade with other bundled
 *   roots): a resumed handshake skips the certificate check, so a ticket must not outlive the
 *   trust that checked its session;
 * - its origin is no longer configured (a changed platform URL);
 * - it was received more than 7 days ago (each ticket carries its own receipt time: saving again
 *   does not make an old ticket young), or the saved record does not parse.
 * Stealing one gains little: the bearer token authenticates the agent, not TLS, and resumption with
 * (EC)DHE (what node offers) keeps recorded traffic secret from the ticket's holder.
 */
import type { Clock } from '../../system/clock.js';
import { createHash } from 'node:crypto';
import type { TlsSessionCache } from './connector.js';

export const TLS_SESSIONS_META_KEY = 'tls.sessions';
/** RFC 8446 4.6.1: servers MUST NOT give a ticket a lifetime over 7 days. */
export const MAX_TICKET_AGE_MS = 7 * 86_400_000;

interface Saved {
  v: 1;
  /** trustFingerprint() of the roots that verified these sessions. */
  trust: string;
  /** When the server sent each ticket (host wall clock): the 7-day bound counts from there. */
  tickets: { key: string; session: string; offered: boolean; receivedAtWallMs: number }[];
}

/** Fingerprint of the trusted roots (PEM strings, in order). */
export function trustFingerprint(roots: readonly string[]): string {
  const h = createHash('sha256');
  for (const r of roots) h.update(r).update('\n');
  return h.digest('hex');
}

/** The session cache's key (connector.ts: servername or IP, and port) for a platform URL. */
export function ticketKeyOf(url: string): string {
  const u = new URL(url);
  const host = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
  return `${host}:${u.port || (u.protocol === 'https:' ? '443' : '80')}`;
}

/** Where the tickets are kept: one key/value fact (store/meta.ts's MetaStore in the agent). */
export interface SessionRecords {
  get(key: string): string | undefined;
  setJson(key: string, value: unknown): void;
  delete(key: string): void;
}

export interface TlsSessionStoreOptions {
  meta: SessionRecords;
  cache: TlsSessionCache;
  /** trustFingerprint() of the roots the dispatcher verifies with. */
  trust: string;
  /** ticketKeyOf() of every configured platform URL. */
  keys: ReadonlySet<string>;
  /** Its wall clock (ms): the 7-day bound only; OpenSSL checks the server's own lifetime. */
  clock: Pick<Clock, 'wallMs'>;
}

export class TlsSessionStore {
  readonly #options: TlsSessionStoreOptions;
  #savedVersion = -1;

  constructor(options: TlsSessionStoreOptions) {
    this.#options = options;
  }

  /** Loads what an earlier process saved into the cache; returns how many tickets (never their content). */
  load(): { loaded: number; discarded: string | undefined } {
    const raw = this.#options.meta.get(TLS_SESSIONS_META_KEY);
    if (raw === undefined) return { loaded: 0, discarded: undefined };
    let saved: Saved;
    try {
      saved = JSON.parse(raw) as Saved;
    } catch {
      return this.#discard('unreadable');
    }
    if (saved?.v !== 1 || !Array.isArray(saved.tickets)) return this.#discard('unreadable');
    if (saved.trust !== this.#options.trust) return this.#discard('the trusted roots changed');
    const now = this.#options.clock.wallMs();
    // A ticket without its receipt time (saved by an older version) has no known age: dropped.
    const young = (t: Saved['tickets'][number]): boolean => {
      const age = now - Number(t?.receivedAtWallMs);
      return age >= 0 && age < MAX_TICKET_AGE_MS;
    };
    const usable = saved.tickets.filter(
      (t) => typeof t?.key === 'string' && this.#options.keys.has(t.key) && typeof t.session === 'string' && t.session.length > 0,
    );
    const entries = usable.filter(young).map((t) => ({
      key: t.key,
      session: Buffer.from(t.session, 'base64'),
      offered: t.offered === true,
      receivedAtWallMs: t.receivedAtWallMs,
    }));
    if (usable.length > 0 && entries.length === 0) return this.#discard('older than 7 days (or received in the future)');
    this.#options.cache.load(entries);
    this.#savedVersion = this.#options.cache.version;
    return { loaded: entries.length, discarded: undefined };
  }

  /** Writes the cache when it changed since the last load or save; true when written. */
  save(): boolean {
    const version = this.#options.cache.version;
    if (version === this.#savedVersion) return false;
    const saved: Saved = {
      v: 1,
      trust: this.#options.trust,
      tickets: this.#options.cache
        .entries()
        .filter((e) => this.#options.keys.has(e.key))
        .map((e) => ({ key: e.key, session: e.session.toString('base64'), offered: e.offered, receivedAtWallMs: e.receivedAtWallMs })),
    };
    this.#options.meta.setJson(TLS_SESSIONS_META_KEY, saved);
    this.#savedVersion = version;
    return true;
  }

  #discard(why: string): { loaded: 0; discarded: string } {
    this.#options.meta.delete(TLS_SESSIONS_META_KEY);
    return { loaded: 0, discarded: why };
  }
}
