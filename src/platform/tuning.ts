import { PASSWORD_RETRY_MAX_S, PASSWORD_RETRY_MIN_S, TOKEN_SERVICE_RETRY_MAX_S, TOKEN_SERVICE_RETRY_MIN_S } from './auth/token-backoff.js';
import { REGISTRATION_RETRY_MAX_S, REGISTRATION_RETRY_MIN_S } from './device/registration-delay.js';
import { PING_INTERVAL_S } from './transport/dispatcher.js';

/**
 * The platform side's waits: constants beside their reasons, not configuration (no installer has
 * a reason to set them). Tests, the demo and the benches shorten them through AgentOptions.tuning.
 */
export interface PlatformTuning {
  /** Credentials rejected: first wait before the next password attempt, doubling up to the max. */
  passwordRetryMinS: number;
  passwordRetryMaxS: number;
  /** Token service 5xx/429/network: first wait (never below Retry-After), doubling up to the max. */
  tokenServiceRetryMinS: number;
  tokenServiceRetryMaxS: number;
  /** Registration 5xx/429/network: first wait (jittered), doubling up to the max. */
  registrationRetryMinS: number;
  registrationRetryMaxS: number;
  /** HTTP/2 PING this often on an open connection; 0: none. */
  pingIntervalS: number;
}

export const PLATFORM_TUNING: Readonly<PlatformTuning> = {
  passwordRetryMinS: PASSWORD_RETRY_MIN_S,
  passwordRetryMaxS: PASSWORD_RETRY_MAX_S,
  tokenServiceRetryMinS: TOKEN_SERVICE_RETRY_MIN_S,
  tokenServiceRetryMaxS: TOKEN_SERVICE_RETRY_MAX_S,
  registrationRetryMinS: REGISTRATION_RETRY_MIN_S,
  registrationRetryMaxS: REGISTRATION_RETRY_MAX_S,
  pingIntervalS: PING_INTERVAL_S,
};
