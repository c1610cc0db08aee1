import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, type ConfigIssue } from '../errors.js';
import { toIssues } from './issues.js';
import { placeholderIssues } from './placeholders.js';
import { jsonSyntaxProblem } from './json-syntax.js';
import { resolvePassword, type Credentials } from './password.js';
import { resolveAddresses, resolveFilePaths, type ResolvedPlatform } from './resolve-paths.js';
import { configSchemas, type RawConfig } from './schema.js';
import { retiredKeys } from './schema-keys.js';
import { Secret } from './secret.js';

/*
 * Reading the configuration: the file (here), the schema's issues made readable (issues.ts), the
 * password (password.ts) and the addresses and paths (resolve-paths.ts).
 */

export const DEFAULT_CONFIG_PATH = '/etc/telematics-agent/config.json';
export const CONFIG_PATH_ENV = 'TELEMATICS_AGENT_CONFIG';
import { PASSWORD_ENV } from './password.js';
export { PASSWORD_ENV, type PasswordSource } from './password.js';

/** The validated, resolved, frozen configuration handed to the composition root. */
export interface Config extends Omit<RawConfig, 'platform' | 'credentials'> {
  platform: ResolvedPlatform;
  credentials: Credentials;
  /** Absolute path of the file this configuration came from. */
  source: string;
}

export interface LoadOptions {
  /** `--config FILE`; otherwise the environment variable, otherwise the default path. */
  path?: string;
  env?: NodeJS.ProcessEnv;
}

export function resolveConfigPath(explicit: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(explicit ?? env[CONFIG_PATH_ENV] ?? DEFAULT_CONFIG_PATH);
}

/** Reads, validates and resolves the configuration. Throws ConfigError listing every problem. */
export function loadConfig(options: LoadOptions = {}): Config {
  const env = options.env ?? process.env;
  const file = resolveConfigPath(options.path, env);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const hint =
      code === 'ENOENT'
        ? `no such file; pass --config FILE or set ${CONFIG_PATH_ENV}`
        : code === 'EACCES'
          ? 'permission denied; run as the service user or fix the file mode'
          : String(code ?? e);
    throw new ConfigError([{ path: '(file)', message: `cannot read ${file}: ${hint}` }]);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new ConfigError([{ path: '(file)', message: `${file} is not valid JSON: ${jsonSyntaxProblem(text, (e as Error).message)}` }]);
  }
  return parseConfig(json, { source: file, env });
}

/** Validates an already parsed JSON value; relative paths in it resolve against `source`'s folder. */
export function parseConfig(json: unknown, options: { source: string; env?: NodeJS.ProcessEnv }): Config {
  const env = options.env ?? process.env;
  const placeholders = placeholderIssues(json);
  const result = configSchemas().configSchema.safeParse(json);
  if (!result.success || placeholders.length > 0) {
    const left = new Set(placeholders.map((i) => i.path));
    const schemaIssues = result.success ? [] : toIssues(result.error.issues, json).filter((i) => !left.has(i.path));
    throw new ConfigError([...placeholders, ...schemaIssues], options.source);
  }
  const raw = result.data;
  const baseDir = path.dirname(options.source);
  const issues: ConfigIssue[] = [];
  const credentials = resolvePassword(raw, env, baseDir, issues);
  if (issues.length > 0 || !credentials) throw new ConfigError(issues, options.source);
  // upload.backlogRatePerS (the key before the adaptive drain) is read as the ceiling that replaced it (warnings.ts says so).
  const upload =
    raw.upload.backlogMaxRatePerS === undefined && raw.upload.backlogRatePerS !== undefined
      ? { ...raw.upload, backlogMaxRatePerS: raw.upload.backlogRatePerS }
      : raw.upload;
  return deepFreeze({
    ...raw,
    upload,
    ...resolveFilePaths(raw, baseDir),
    platform: resolveAddresses(raw, baseDir),
    credentials,
    source: options.source,
  });
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !(value instanceof Secret) && !Object.isFrozen(value)) {
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/**
 * The effective configuration as a file of this schema, every secret masked, for `config check`: it
 * reads back as valid (no `source`, no `passwordSource`) except for an inline password, whose mask
 * the schema refuses, so the printout saved as a file never logs in with the mask. It names only
 * the password key in use, so a password file that is not there yet is shown as that file.
 * Keys of an earlier version are left out: the agent does not read them (backlogRatePerS shows as
 * the backlogMaxRatePerS it became), and a file copied from this output starts without warnings.
 */
export function maskedConfig(config: Config): Record<string, unknown> {
  const { source: _source, credentials, ...rest } = config;
  const shown: Record<string, unknown> = { username: credentials.username };
  if (credentials.passwordSource === 'config') shown.password = credentials.password;
  if (credentials.passwordSource === 'passwordFile') shown.passwordFile = credentials.passwordFile;
  const out = JSON.parse(JSON.stringify({ ...rest, credentials: shown })) as Record<string, unknown>;
  for (const key of retiredKeys()) {
    const parts = key.split('.');
    const leaf = parts.pop() as string;
    const parent = parts.reduce<unknown>((node, k) => (node as Record<string, unknown> | undefined)?.[k], out);
    if (parent !== null && typeof parent === 'object') delete (parent as Record<string, unknown>)[leaf];
  }
  return out;
}

/** Where the password comes from when the file does not say it (the environment, a systemd credential); else undefined. */
export function passwordOverride(config: Config): string | undefined {
  const c = config.credentials;
  if (c.passwordSource === 'env') return `the password comes from $${PASSWORD_ENV}, which takes precedence over the file's credentials`;
  if (c.passwordSource === 'systemd-credential')
    return `the password comes from the systemd credential ${c.password.origin?.replace(/^the password file /, '') ?? '$CREDENTIALS_DIRECTORY/password'}, which takes precedence over the file's credentials`;
  return undefined;
}
