import { PlatformError, type AgentError } from '../errors.js';
import { atLeastRetryAfter, backoffMs } from '../retry/backoff.js';
import { statusMeaning } from '../retry/status-table.js';

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
 * has to act); the token manager's own wait (credentials rejected, token service down) is
 * honoured; everything else backs off exponentially with equal jitter, never below Retry-After.
 */
export function registrationDelayMs(error: AgentError, failures: number, tuning: RegistrationRetryTuning, random: number): number {
  const retryAfterMs = error instanceof PlatformError ? error.retryAfterMs : undefined;
  const status = error instanceof PlatformError ? error.status : undefined;
  if (error.code !== 'CREDENTIALS_REJECTED' && status !== undefined && statusMeaning('device', status) === 'config')
    return Math.max(tuning.configRetryS * 1000, retryAfterMs ?? 0);
  if (error.errorClass === 'config' && retryAfterMs === undefined) return tuning.configRetryS * 1000;
  const delay = backoffMs(failures, { minMs: tuning.retryMinS * 1000, maxMs: tuning.retryMaxS * 1000 }, random);
  return atLeastRetryAfter(delay, retryAfterMs);
}
