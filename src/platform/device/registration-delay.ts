import { PlatformError, type AgentError } from '../../errors.js';
import { atLeastRetryAfter, backoffMs, spreadMs } from '../../retry/backoff.js';
import { statusMeaning } from '../../retry/status-table.js';

/**
 * A registration the device service refuses as a configuration problem (400/403: the device
 * section, the account's rights) waits half to all of an hour: only a person can fix it, and a
 * fleet misconfigured together (1,000 gateways) then asks about 0.3 times a second, spread, instead
 * of all at once. Fixed sooner, `telematics-agent register` or a restart asks at once.
 */
export const REGISTRATION_CONFIG_RETRY_S = 3600;

/**
 * A registration failing transiently (5xx, 429, network): 5 s doubling to 10 min, with jitter. A
 * device registers once in its life; the agent records meanwhile, so the wait delays only the first
 * delivery, by at most the step running when the device service is back.
 */
export const REGISTRATION_RETRY_MIN_S = 5;
export const REGISTRATION_RETRY_MAX_S = 600;

export interface RegistrationRetryTuning {
  /** REGISTRATION_RETRY_MIN_S / MAX_S in the daemon: 5xx, 429, network. */
  retryMinS: number;
  retryMaxS: number;
  /** REGISTRATION_CONFIG_RETRY_S in the daemon: the `config` statuses of the device column (a human must act). */
  configRetryS: number;
}

/**
 * How long to wait after a failed registration attempt: the whole policy as one function of plain
 * facts. Configuration problems (the `device` column of retry/status-table.ts) wait long (a human
 * has to act; half to all of configRetryS, so a fleet does not come back at once); the token manager's own wait (credentials rejected, token service down) is
 * honoured; everything else backs off exponentially with equal jitter, never below Retry-After.
 */
export function registrationDelayMs(error: AgentError, failures: number, tuning: RegistrationRetryTuning, random: number): number {
  const retryAfterMs = error instanceof PlatformError ? error.retryAfterMs : undefined;
  const status = error instanceof PlatformError ? error.status : undefined;
  if (error.code !== 'CREDENTIALS_REJECTED' && status !== undefined && statusMeaning('device', status) === 'config')
    return atLeastRetryAfter(spreadMs(tuning.configRetryS * 1000, random), retryAfterMs, Infinity, random);
  if (error.errorClass === 'config' && retryAfterMs === undefined) return spreadMs(tuning.configRetryS * 1000, random);
  const delay = backoffMs(failures, { minMs: tuning.retryMinS * 1000, maxMs: tuning.retryMaxS * 1000 }, random);
  // The token manager's wait for a rejected password is already spread per agent: kept as it is.
  return atLeastRetryAfter(delay, retryAfterMs, Infinity, error.code === 'CREDENTIALS_REJECTED' ? undefined : random);
}
