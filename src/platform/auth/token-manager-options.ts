import type { Secret } from '../../config/secret.js';
import type { Logger } from '../../log.js';
import type { BootClock } from '../../system/boot-clock.js';
import type { Clock } from '../../system/clock.js';
import type { StartSpread } from '../device/start-spread.js';
import type { PlatformHttp } from '../transport/http.js';
import type { SecretRedactor } from './secret-redactor.js';
import type { TokenBackoffTuning } from './token-backoff.js';
import type { TokenLockTuning } from './token-lock.js';
import type { TokenRecords } from './token-records.js';

/** What the token manager (token-manager.ts) is built with, and what it hands out. */

export interface TokenManagerTuning extends TokenBackoffTuning, TokenLockTuning {
  /** Refresh this long before the recorded lifetime runs out (at most a tenth of the lifetime). */
  refreshMarginS: number;
  /** How often start() checks whether the token is due for a refresh. */
  maintainIntervalMs: number;
  /**
   * Renew ahead of time only while a request used the token within this many seconds
   * (TOKEN_KEEP_FRESH_S); undefined: always ahead, used or not.
   */
  keepFreshS?: number;
  /** Idle (see keepFreshS): renew ahead anyway once the pair is this old (TOKEN_IDLE_REFRESH_AGE_S). */
  idleRefreshAgeS?: number;
}

export interface TokenManagerOptions {
  /** The stored pair, its refresh state and the lock (store/token-store.ts in the agent). */
  records: TokenRecords;
  http: PlatformHttp;
  /** platform.authUrl (ends in /api/v1). */
  authUrl: string;
  credentials: { username: string; password: Secret };
  /** Wall time for the lock and status; monotonic time for backoffs. */
  clock: Clock;
  /** Token ages (boot-clock.ts). */
  bootClock: BootClock;
  logger: Logger;
  tuning: TokenManagerTuning;
  random?: () => number;
  /** Told every token held and every password sent, so that an echo of one in an answer is redacted. */
  redactor?: SecretRedactor;
  /** The daemon's start-up spread (platform.startupJitterS): the first refresh or password grant waits for it, a valid stored pair does not. */
  startSpread?: StartSpread;
}

/** An access token to send, and the generation it belongs to (for renewAfterUnauthorized). */
export interface AccessGrant {
  token: string;
  generation: number;
}
