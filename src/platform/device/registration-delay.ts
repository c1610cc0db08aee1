import { PlatformError, type AgentError } from '../../errors.js';
import { atLeastRetryAfter, backoffMs, spreadMs } from '../../retry/backoff.js';
import { statusMeaning } from '../../retry/status-table.js';

export interface RegistrationRetryTuning {
  /** platform.registrationRetryMinS / MaxS: 5xx, 429, network. */
  retryMinS: number;
  retryMaxS: number;
  /** platform.registrationConfigRetryS: the `config` statuses of the device column (a human must act). */
  configRetryS: number;
}

/**
 * How long to wait after a failed registration attempt: the whole policy as one function of plain
 * facts. Configuration problems (the `device` column of retry/status-table.ts) wait long (a human
 * has to act; half to all of registrationConfigRetryS, so a fleet does not come back at once); the token manager's own wait (credentials rejected, token service down) is
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
