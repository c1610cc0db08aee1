import { ConfigError, type ConfigIssue } from '../errors.js';
import { Secret } from './secret.js';

/**
 * A password fixed in place takes effect at the next attempt. A password kept in a file
 * (credentials.passwordFile, or systemd's $CREDENTIALS_DIRECTORY/password) is read anew every time
 * the token client needs it, that is before every password grant, which happens once at start and
 * then only after a refresh token expired or the credentials were rejected: a few reads a day.
 *
 * `read` is the configuration's own reader (mode check, trailing newline, empty file), so that the
 * daemon judges the file exactly as `config check` does. A file that cannot be read now fails that
 * one attempt with a ConfigError naming the key and the fix; the next attempt reads it again.
 */
export function passwordFromFile(file: string, read: (issues: ConfigIssue[]) => string | undefined): Secret {
  return new Secret(
    () => {
      const issues: ConfigIssue[] = [];
      const value = read(issues);
      if (value === undefined)
        throw new ConfigError(issues.length > 0 ? issues : [{ path: 'credentials.passwordFile', message: `cannot read ${file}` }]);
      return value;
    },
    { origin: `the password file ${file}` },
  );
}

/** What a person must fix when the token service rejects the credentials, and whether a restart is needed. */
export function passwordFixHint(password: Secret, wallMsOfNextAttempt: number | undefined): string {
  const where = password.origin ?? 'the password';
  if (!password.rereads) return `fix credentials.username or ${where}, then restart the agent`;
  const at = wallMsOfNextAttempt === undefined ? 'the next attempt' : `the next attempt at ${new Date(wallMsOfNextAttempt).toISOString()}`;
  return `fix credentials.username or ${where}, it is read again before ${at}: no restart needed`;
}
