import type { Config } from '../config/load.js';
import { describeError, isAgentError } from '../errors.js';

/**
 * The one line a one-shot command (register, device show, location put|here) prints when it
 * fails. A rejected password gets a sentence for a person at a terminal: which user, what the
 * platform said, where the password came from, and to run the command again; not the daemon's
 * backoff ("next attempt in 94 s") or restart advice, which mean nothing to a command that exits.
 */
export function oneShotFailure(what: string, e: unknown, config?: Config): string {
  return `${what} failed: ${rejectedPasswordSentence(e, config) ?? describeError(e)}`;
}

/** The sentence for a password the token service refused; undefined for any other error. */
export function rejectedPasswordSentence(e: unknown, config?: Config): string | undefined {
  if (isAgentError(e) && e.code === 'CREDENTIALS_REJECTED') {
    const said = typeof e.details?.platformMessage === 'string' && e.details.platformMessage !== '' ? e.details.platformMessage : undefined;
    const user = config ? ` for user "${config.credentials.username}"` : '';
    const origin = config?.credentials.password.origin;
    const where = !config
      ? 'the credentials in the configuration'
      : origin === 'credentials.password'
        ? `credentials.username and credentials.password in ${config.source}`
        : `credentials.username in ${config.source} and ${origin ?? 'the password'}`;
    return `the platform refused the password${user}${said ? ` (it said: ${said})` : ''}. Check ${where}, then run the command again.`;
  }
  return undefined;
}
