import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { ConfigIssue } from '../errors.js';
import { passwordFromFile } from './password-source.js';
import type { RawConfig } from './schema.js';
import { Secret } from './secret.js';

export const PASSWORD_ENV = 'TELEMATICS_AGENT_PASSWORD';

export type PasswordSource = 'env' | 'systemd-credential' | 'passwordFile' | 'config';

export interface Credentials {
  username: string;
  password: Secret;
  passwordSource: PasswordSource;
  passwordFile?: string;
}

/** Finds the password: environment, systemd credential, config value or file, in that order. */
export function resolvePassword(raw: RawConfig, env: NodeJS.ProcessEnv, baseDir: string, issues: ConfigIssue[]): Credentials | undefined {
  const c = raw.credentials;
  const base = { username: c.username };
  const fromEnv = env[PASSWORD_ENV];
  if (fromEnv !== undefined && fromEnv !== '')
    return { ...base, password: new Secret(fromEnv, { origin: `$${PASSWORD_ENV}` }), passwordSource: 'env' };

  // systemd LoadCredential=password:... makes the file available here, readable only by the service.
  const credDir = env.CREDENTIALS_DIRECTORY;
  if (credDir) {
    const credFile = path.join(credDir, 'password');
    const value = readSecretFile(credFile, 'credentials.passwordFile', issues, { checkMode: false });
    if (value !== undefined) {
      const password = passwordFromFile(credFile, (later) =>
        readSecretFile(credFile, 'credentials.passwordFile', later, { checkMode: false }),
      );
      return { ...base, password, passwordSource: 'systemd-credential' };
    }
    if (issues.length > 0) return undefined;
  }

  if (c.password !== undefined)
    return { ...base, password: new Secret(c.password, { origin: 'credentials.password' }), passwordSource: 'config' };
  if (c.passwordFile !== undefined) {
    const file = path.resolve(baseDir, c.passwordFile);
    // `config check` judges the file, not the machine: a password file that is not installed here
    // yet is doctor's finding and fails when the password is first needed. One that exists but
    // is readable by others is refused now.
    // Read again before every password grant (password-source.ts): a file fixed in place needs no restart.
    const password = passwordFromFile(file, (later) => readSecretFile(file, 'credentials.passwordFile', later, { checkMode: true }));
    if (existsSync(file) && readSecretFile(file, 'credentials.passwordFile', issues, { checkMode: true }) === undefined) return undefined;
    return { ...base, password, passwordSource: 'passwordFile', passwordFile: file };
  }
  issues.push({
    path: 'credentials.passwordFile',
    message: `no password: set credentials.passwordFile (a file with mode 0600) or credentials.password, or the ${PASSWORD_ENV} environment variable`,
  });
  return undefined;
}

/** Reads a one-line secret file; refuses one that group or others can read, as ssh does for keys. */
function readSecretFile(file: string, key: string, issues: ConfigIssue[], opts: { checkMode: boolean }): string | undefined {
  let mode: number;
  try {
    mode = statSync(file).mode;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (!opts.checkMode && code === 'ENOENT') return undefined;
    issues.push({
      path: key,
      message: `cannot read ${file}: ${code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : String(code)}`,
    });
    return undefined;
  }
  if (opts.checkMode && (mode & 0o077) !== 0) {
    issues.push({
      path: key,
      message: `${file} is readable by group or others (mode ${(mode & 0o777).toString(8).padStart(4, '0')}); run: chmod 600 ${file}`,
    });
    return undefined;
  }
  let value: string;
  try {
    value = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
  } catch (e) {
    issues.push({ path: key, message: `cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? 'error'}` });
    return undefined;
  }
  if (value === '') {
    issues.push({ path: key, message: `${file} is empty; write the password into it` });
    return undefined;
  }
  return value;
}
