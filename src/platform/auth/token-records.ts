/**
 * What the token manager needs of the database: the stored pair, its refresh state and the token
 * lock. Declared here, where it is used; src/store/token-store.ts implements it in SQLite (table
 * token_pair and three meta facts), and the composition root hands it over (store/stores.ts).
 */

/** The token pair as stored (token-pair.ts's TokenPair has this shape). */
export interface StoredTokenPair {
  accessToken: string;
  refreshToken: string;
  idToken?: string;
  tokenType: string;
  expiresInS: number;
}

export type RefreshState = 'usable' | 'sending' | 'spent';

export type TokenCounter = 'auth.passwordGrants' | 'auth.refreshes';

export interface StoredToken {
  pair: StoredTokenPair;
  generation: number;
  obtainedAtWallMs: number;
  bootId: string | undefined;
  bootMs: number | undefined;
  refreshState: RefreshState;
}

export interface LockHolder {
  owner: string;
  pid: number;
  acquiredAt: number;
}

export interface TokenRecords {
  read(): StoredToken | undefined;
  /**
   * Takes the token lock when it is free, ours, or abandoned (`isStale`), atomically across
   * processes; returns the stored pair as read under the lock.
   */
  tryLock(
    owner: string,
    nowWallMs: number,
    isStale: (holder: LockHolder) => boolean,
  ): { acquired: boolean; holder: LockHolder | undefined; stored: StoredToken | undefined };
  unlock(owner: string): void;
  /** Records the fate of the refresh token of `generation` (committed before it is sent). */
  setRefreshState(generation: number, state: RefreshState): void;
  /** Commits a pair as `generation` with its receipt stamp and counts; false when the stored one is as new or newer. */
  commit(
    pair: StoredTokenPair,
    generation: number,
    stamp: { wallMs: number; bootId: string; bootMs: number },
    counts: Partial<Record<TokenCounter, number>>,
  ): boolean;
  /** Forgets a stored pair that may not be used, keeping its generation number. */
  discard(generation: number): void;
}
