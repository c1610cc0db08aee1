import { createHash } from 'node:crypto';
import type { Secret } from '../../config/secret.js';
import type { Logger } from '../../log.js';
import type { Clock } from '../../system/clock.js';
import type { TokenBackoff } from './token-backoff.js';

/** While credentials are rejected, how often the password source is read to see whether it was fixed. */
const PASSWORD_CHANGE_CHECK_MS = 5_000;

export interface PasswordWatchOptions {
  password: Secret;
  /** Monotonic time for the checks. */
  clock: Clock;
  logger: Logger;
  /** Its rejection wait ends when the password changed. */
  backoff: TokenBackoff;
}

/**
 * Notes which password the token service rejected (a hash, never the value), so that a password
 * file fixed in place is tried at once instead of after the rejection backoff (up to an hour).
 */
export class PasswordWatch {
  readonly #options: PasswordWatchOptions;
  /** Fingerprint of the password the token service rejected, and when the source was last looked at. */
  #rejected: { fingerprint: string; checkedAtMs: number } | undefined;

  constructor(options: PasswordWatchOptions) {
    this.#options = options;
  }

  rejected(nowMs: number): void {
    const fingerprint = this.#fingerprint();
    this.#rejected = fingerprint === undefined ? undefined : { fingerprint, checkedAtMs: nowMs };
  }

  /** The credentials were accepted: nothing to watch. */
  accepted(): void {
    this.#rejected = undefined;
  }

  /** While credentials are rejected: has the password source changed since? Then the wait ends now. */
  check(): void {
    const r = this.#rejected;
    const { clock, password, backoff, logger } = this.#options;
    const nowMs = clock.monotonicMs();
    if (!r || !password.rereads || nowMs - r.checkedAtMs < PASSWORD_CHANGE_CHECK_MS) return;
    r.checkedAtMs = nowMs;
    const fingerprint = this.#fingerprint();
    if (fingerprint === undefined || fingerprint === r.fingerprint) return;
    this.#rejected = undefined;
    if (backoff.rejectedUntilWall(nowMs) === undefined) return;
    backoff.clearRejected();
    logger.info({ source: password.origin }, 'the password changed since it was rejected: trying it now');
  }

  #fingerprint(): string | undefined {
    try {
      return createHash('sha256').update(this.#options.password.reveal()).digest('base64');
    } catch {
      return undefined;
    }
  }
}
