import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { z } from 'zod';
import { ConfigError, type ConfigIssue } from '../errors.js';
import { defaultAddress } from './addresses.js';
import { configSchema, type RawConfig } from './schema.js';
import { Secret } from './secret.js';

export const DEFAULT_CONFIG_PATH = '/etc/telematics-agent/config.json';
export const CONFIG_PATH_ENV = 'TELEMATICS_AGENT_CONFIG';
export const PASSWORD_ENV = 'TELEMATICS_AGENT_PASSWORD';

export type PasswordSource = 'env' | 'systemd-credential' | 'passwordFile' | 'config';

/** The validated, resolved, frozen configuration handed to the composition root. */
export interface Config extends Omit<RawConfig, 'platform' | 'credentials'> {
  platform: Omit<RawConfig['platform'], 'authUrl' | 'planningUrl' | 'deviceUrl'> & {
    authUrl: string;
    planningUrl: string;
    deviceUrl: string;
  };
  credentials: {
    username: string;
    password: Secret;
    passwordSource: PasswordSource;
    passwordFile?: string;
  };
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
    throw new ConfigError([{ path: '(file)', message: `${file} is not valid JSON: ${(e as Error).message}` }]);
  }
  return parseConfig(json, { source: file, env });
}

/** Validates an already parsed JSON value; relative paths in it resolve against `source`'s folder. */
export function parseConfig(json: unknown, options: { source: string; env?: NodeJS.ProcessEnv }): Config {
  const env = options.env ?? process.env;
  const result = configSchema.safeParse(json);
  const issues: ConfigIssue[] = [];
  if (!result.success) {
    issues.push(...result.error.issues.map(toIssue));
    // The cross-field rules below need a typed config; check the two that matter most on the raw
    // JSON too, so that one run reports every problem.
    issues.push(...rawCrossFieldIssues(json));
  }
  const raw = result.success ? result.data : undefined;
  const baseDir = path.dirname(options.source);

  const platform = raw ? resolveAddresses(raw, issues) : undefined;
  const credentials = raw ? resolvePassword(raw, env, baseDir, issues) : undefined;
  if (issues.length > 0 || !raw || !platform || !credentials) throw new ConfigError(issues, options.source);

  const config: Config = {
    ...raw,
    platform,
    credentials,
    dataDir: path.resolve(baseDir, raw.dataDir),
    gnss: {
      ...raw.gnss,
      ...(raw.gnss.replayFile !== undefined ? { replayFile: path.resolve(baseDir, raw.gnss.replayFile) } : {}),
    },
    source: options.source,
  };
  if (config.platform.caFile !== undefined) config.platform.caFile = path.resolve(baseDir, config.platform.caFile);
  return deepFreeze(config);
}

function rawCrossFieldIssues(json: unknown): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  const obj = (v: unknown): Record<string, unknown> | undefined =>
    v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  const root = obj(json);
  if (!root) return out;
  const creds = obj(root.credentials);
  if (creds && creds.password !== undefined && creds.passwordFile !== undefined) {
    out.push({ path: 'credentials.password', message: 'set either credentials.password or credentials.passwordFile, not both' });
  }
  if (obj(root.platform)?.deviceUrl === undefined) {
    out.push({ path: 'platform.deviceUrl', message: DEVICE_URL_REQUIRED });
  }
  return out;
}

const DEVICE_URL_REQUIRED =
  'is required: the tracking device service has no published address; set it to the base your platform contact gave you (it ends in /api/public/v2/)';

function toIssue(issue: z.core.$ZodIssue): ConfigIssue {
  const keyPath = issue.path.map(String).join('.');
  let message = issue.message;
  if (issue.code === 'unrecognized_keys') {
    const where = keyPath ? `${keyPath}.` : '';
    const known = knownKeys(issue.path.map(String));
    const hints = issue.keys.map((k) => {
      const near = closestKey(k, known);
      return near ? `${k}: did you mean ${near}?` : k;
    });
    return {
      path: issue.keys.map((k) => `${where}${k}`).join(', '),
      message: `unknown key${issue.keys.length > 1 ? 's' : ''} (${hints.join('; ')}); allowed here: ${known.join(', ')}`,
    };
  }
  if (issue.code === 'invalid_type' && /received undefined/.test(message)) message = `is required (${issue.expected})`;
  return { path: keyPath, message };
}

function resolveAddresses(raw: RawConfig, issues: ConfigIssue[]): Config['platform'] | undefined {
  const p = raw.platform;
  if (p.deviceUrl === undefined) {
    issues.push({ path: 'platform.deviceUrl', message: DEVICE_URL_REQUIRED });
    return undefined;
  }
  return {
    ...p,
    authUrl: p.authUrl ?? defaultAddress('authUrl', raw.environment),
    planningUrl: (p.planningUrl ?? defaultAddress('planningUrl', raw.environment)).replace(/\/+$/, ''),
    deviceUrl: p.deviceUrl.endsWith('/') ? p.deviceUrl : `${p.deviceUrl}/`,
  };
}

function resolvePassword(
  raw: RawConfig,
  env: NodeJS.ProcessEnv,
  baseDir: string,
  issues: ConfigIssue[],
): Config['credentials'] | undefined {
  const c = raw.credentials;
  if (c.password !== undefined && c.passwordFile !== undefined) {
    issues.push({ path: 'credentials.password', message: 'set either credentials.password or credentials.passwordFile, not both' });
    return undefined;
  }
  const base = { username: c.username };
  const fromEnv = env[PASSWORD_ENV];
  if (fromEnv !== undefined && fromEnv !== '') return { ...base, password: new Secret(fromEnv), passwordSource: 'env' };

  // systemd LoadCredential=password:... makes the file available here, readable only by the service.
  const credDir = env.CREDENTIALS_DIRECTORY;
  if (credDir) {
    const credFile = path.join(credDir, 'password');
    const value = readSecretFile(credFile, 'credentials.passwordFile', issues, { checkMode: false });
    if (value !== undefined) return { ...base, password: new Secret(value), passwordSource: 'systemd-credential' };
    if (issues.length > 0) return undefined;
  }

  if (c.password !== undefined) return { ...base, password: new Secret(c.password), passwordSource: 'config' };
  if (c.passwordFile !== undefined) {
    const file = path.resolve(baseDir, c.passwordFile);
    // `config check` judges the file, not the machine: a password file that is not installed here
    // yet is doctor's finding and fails when the password is first needed. One that exists but
    // is readable by others is refused now.
    if (!existsSync(file)) {
      const lazy = new Secret(() => {
        const later: ConfigIssue[] = [];
        const v = readSecretFile(file, 'credentials.passwordFile', later, { checkMode: true });
        if (v === undefined) throw new ConfigError(later);
        return v;
      });
      return { ...base, password: lazy, passwordSource: 'passwordFile', passwordFile: file };
    }
    const value = readSecretFile(file, 'credentials.passwordFile', issues, { checkMode: true });
    if (value === undefined) return undefined;
    return { ...base, password: new Secret(value), passwordSource: 'passwordFile', passwordFile: file };
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

/** The keys the schema allows at a path, for "did you mean" hints. */
function knownKeys(keyPath: string[]): string[] {
  let node: unknown = configSchema;
  for (const k of [...keyPath, '']) {
    // Unwrap defaults, prefaults and optionals until an object schema shows its shape.
    for (let i = 0; i < 8 && node && !(node as { shape?: unknown }).shape; i++)
      node = (node as { _zod?: { def?: { innerType?: unknown } } })._zod?.def?.innerType;
    const shape = (node as { shape?: Record<string, unknown> } | undefined)?.shape;
    if (!shape) return [];
    if (k === '') return Object.keys(shape);
    node = shape[k];
  }
  return [];
}

function closestKey(key: string, known: string[]): string | undefined {
  let best: { k: string; d: number } | undefined;
  for (const k of known) {
    const d = k.toLowerCase() === key.toLowerCase() ? 0 : editDistance(k.toLowerCase(), key.toLowerCase());
    if (d <= Math.max(1, Math.floor(k.length / 4)) && (!best || d < best.d)) best = { k, d };
  }
  return best?.k;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++)
      cur[j] = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length] ?? 0;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !(value instanceof Secret) && !Object.isFrozen(value)) {
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** The configuration as JSON with every secret masked, for `config check` and status. */
export function maskedConfig(config: Config): Record<string, unknown> {
  return JSON.parse(JSON.stringify(config)) as Record<string, unknown>;
}
