import type { LockHolder, RefreshState, StoredToken, StoredTokenPair, TokenCounter, TokenRecords } from '../platform/auth/token-records.js';
import type { Database } from './database.js';
import type { MetaStore } from './meta.js';

/**
 * The token pair in SQLite (table token_pair of migration 1) plus three facts in `meta`:
 *   token.refreshState  {generation, state}: 'sending' is written (and fsynced: synchronous=FULL)
 *                       before a refresh token goes on the wire; a crash leaves it behind, and the
 *                       next process then knows that refresh token may already be spent.
 *   token.boot          {generation, bootId, bootMs}: receipt time on the boot clock (boot-clock.ts).
 *   token.lock          {owner, pid, acquiredAt}: who may talk to the token service right now.
 * The pair and its facts change in one transaction, so a power cut leaves the old or the new pair.
 */

interface Row {
  access_token: string;
  refresh_token: string;
  id_token: string | null;
  token_type: string;
  expires_in_s: number;
  obtained_at: number;
  generation: number;
}

const KEY_STATE = 'token.refreshState';
const KEY_BOOT = 'token.boot';
const KEY_LOCK = 'token.lock';

/** TokenRecords (platform/auth/token-records.ts) in SQLite; built once by openStores (stores.ts). */
export class TokenStore implements TokenRecords {
  readonly #db: Database;
  readonly #meta: MetaStore;
  readonly #select;
  readonly #upsert;
  readonly #discard;
  readonly #age;

  constructor(db: Database, meta: MetaStore) {
    this.#db = db;
    this.#meta = meta;
    this.#select = db.prepare<[], Row>(
      'SELECT access_token, refresh_token, id_token, token_type, expires_in_s, obtained_at, generation FROM token_pair WHERE id = 1',
    );
    this.#upsert = db.prepare(
      `INSERT INTO token_pair (id, access_token, refresh_token, id_token, token_type, expires_in_s, obtained_at, generation)
       VALUES (1, @access, @refresh, @id, @type, @expiresIn, @obtainedAt, @generation)
       ON CONFLICT(id) DO UPDATE SET access_token = excluded.access_token, refresh_token = excluded.refresh_token, id_token = excluded.id_token,
         token_type = excluded.token_type, expires_in_s = excluded.expires_in_s, obtained_at = excluded.obtained_at, generation = excluded.generation`,
    );
    this.#age = db.prepare<[], { obtainedAt: number; expiresInS: number }>(
      'SELECT obtained_at AS obtainedAt, expires_in_s AS expiresInS FROM token_pair WHERE id = 1',
    );
    // The row stays (its generation counts on); the tokens become empty strings, which no check passes.
    this.#discard = db.prepare(
      "UPDATE token_pair SET access_token = '', refresh_token = '', id_token = NULL, expires_in_s = 0 WHERE id = 1",
    );
  }

  /** When the stored pair was obtained (wall ms) and its lifetime; never the tokens themselves (status). */
  age(): { obtainedAt: number; expiresInS: number } | undefined {
    return this.#age.get();
  }

  read(): StoredToken | undefined {
    const row = this.#select.get();
    if (!row) return undefined;
    const state = this.#meta.getJson<{ generation: number; state: RefreshState }>(KEY_STATE);
    const boot = this.#meta.getJson<{ generation: number; bootId: string; bootMs: number }>(KEY_BOOT);
    return {
      pair: {
        accessToken: row.access_token,
        refreshToken: row.refresh_token,
        ...(row.id_token ? { idToken: row.id_token } : {}),
        tokenType: row.token_type,
        expiresInS: row.expires_in_s,
      },
      generation: row.generation,
      obtainedAtWallMs: row.obtained_at,
      bootId: boot?.generation === row.generation ? boot.bootId : undefined,
      bootMs: boot?.generation === row.generation ? boot.bootMs : undefined,
      refreshState: state?.generation === row.generation ? state.state : 'usable',
    };
  }

  /**
   * Takes the token lock when it is free, ours, or abandoned (`isStale`), in one BEGIN IMMEDIATE
   * transaction so that two processes cannot both take it; returns the stored pair as read under
   * the lock (callers must re-check it: another process may have rotated it meanwhile).
   */
  tryLock(
    owner: string,
    nowWallMs: number,
    isStale: (holder: LockHolder) => boolean,
  ): { acquired: boolean; holder: LockHolder | undefined; stored: StoredToken | undefined } {
    return this.#db
      .transaction(() => {
        const holder = this.#meta.getJson<LockHolder>(KEY_LOCK);
        const free = holder === undefined || holder.owner === owner || isStale(holder);
        if (free) this.#meta.setJson(KEY_LOCK, { owner, pid: process.pid, acquiredAt: nowWallMs } satisfies LockHolder);
        return { acquired: free, holder: free ? undefined : holder, stored: this.read() };
      })
      .immediate();
  }

  unlock(owner: string): void {
    this.#db
      .transaction(() => {
        if (this.#meta.getJson<LockHolder>(KEY_LOCK)?.owner === owner) this.#meta.delete(KEY_LOCK);
      })
      .immediate();
  }

  /** Records the fate of the refresh token of `generation` (committed before it is sent). */
  setRefreshState(generation: number, state: RefreshState): void {
    this.#db
      .transaction(() => {
        if (state === 'usable') this.#meta.delete(KEY_STATE);
        else this.#meta.setJson(KEY_STATE, { generation, state });
      })
      .immediate();
  }

  /**
   * Commits a pair as generation `generation` with its receipt stamp, in one transaction, and adds
   * `counts` to the persistent counters; only after this returns may the old refresh token be
   * forgotten from disk. Returns false and writes nothing when the stored generation is already
   * this one or newer (another process rotated meanwhile: a pair kept in memory while the disk was
   * full must not overwrite it).
   */
  commit(
    pair: StoredTokenPair,
    generation: number,
    stamp: { wallMs: number; bootId: string; bootMs: number },
    counts: Partial<Record<TokenCounter, number>>,
  ): boolean {
    return this.#db
      .transaction(() => {
        const current = this.#select.get()?.generation;
        if (current !== undefined && current >= generation) return false;
        this.#upsert.run({
          access: pair.accessToken,
          refresh: pair.refreshToken,
          id: pair.idToken ?? null,
          type: pair.tokenType,
          expiresIn: Math.round(pair.expiresInS),
          obtainedAt: stamp.wallMs,
          generation,
        });
        this.#meta.delete(KEY_STATE);
        this.#meta.setJson(KEY_BOOT, { generation, bootId: stamp.bootId, bootMs: stamp.bootMs });
        for (const [name, by] of Object.entries(counts)) if (by) this.#meta.increment(name, by);
        return true;
      })
      .immediate();
  }

  /**
   * Forgets a stored pair that may not be used (TOKEN_PAIR_MALFORMED at load), keeping
   * its generation number so that generations keep growing.
   */
  discard(generation: number): void {
    this.#db
      .transaction(() => {
        if (this.#select.get()?.generation === generation) this.#discard.run();
        this.#meta.delete(KEY_STATE);
      })
      .immediate();
  }
}
