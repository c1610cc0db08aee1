import { PlatformError, type AgentError } from '../errors.js';

export interface RegistrationRetryTuning {
  /** platform.registrationRetryMinS / MaxS: 5xx, 429, network. */
  retryMinS: number;
  retryMaxS: number;
  /** platform.registrationConfigRetryS: 400, 403, 404 (a human must act). */
  configRetryS: number;
}

/** Statuses of the device service that mean "fix the configuration" (platform-notes.md: 400, 403). */
export function isConfigStatus(status: number): boolean {
  return status === 400 || status === 403 || status === 404 || status === 405 || status === 422;
}

/**
 * How long to wait after a failed registration attempt: the whole policy as one function of plain
 * facts. Configuration problems wait long (a human has to act); the token manager's own wait
 * (credentials rejected, token service down) is honoured; everything else backs off
 * exponentially with equal jitter, never below Retry-After.
 */
export function registrationDelayMs(error: AgentError, failures: number, tuning: RegistrationRetryTuning, random: number): number {
  const retryAfterMs = error instanceof PlatformError ? error.retryAfterMs : undefined;
  const status = error instanceof PlatformError ? error.status : undefined;
  if (error.code !== 'CREDENTIALS_REJECTED' && status !== undefined && isConfigStatus(status))
    return Math.max(tuning.configRetryS * 1000, retryAfterMs ?? 0);
  if (error.errorClass === 'config' && retryAfterMs === undefined) return tuning.configRetryS * 1000;
  const step = Math.min(tuning.retryMaxS * 1000, tuning.retryMinS * 1000 * 2 ** Math.min(Math.max(failures - 1, 0), 30));
  return Math.max(Math.round(step / 2 + (step / 2) * random), retryAfterMs ?? 0);
}
