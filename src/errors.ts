/**
 * The one errors module. Every error the agent raises on purpose is an AgentError with a stable
 * `code` (for logs, status output and tests) and a `retryable` flag (for supervisors and the
 * retry decision). Messages never contain secrets: callers pass field names, never values.
 */

export type ErrorClass =
  /** Try again later: network, 5xx, 429, timeouts, a busy database. */
  | 'transient'
  /** Get a new access token, then try once more. */
  | 'auth'
  /** A human has to change configuration or credentials; retry only slowly. */
  | 'config'
  /** The platform refused this one item for good (e.g. 400 on one event). */
  | 'rejected'
  /** A bug or an impossible state. */
  | 'internal';

export interface AgentErrorOptions {
  cause?: unknown;
  retryable?: boolean;
  class?: ErrorClass;
  /** Extra structured facts for logs and status (never secrets). */
  details?: Record<string, unknown>;
}

export class AgentError extends Error {
  readonly code: string;
  readonly retryable: boolean;
  readonly errorClass: ErrorClass;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: string, message: string, options: AgentErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AgentError';
    this.code = code;
    this.errorClass = options.class ?? 'internal';
    this.retryable = options.retryable ?? (this.errorClass === 'transient' || this.errorClass === 'auth');
    this.details = options.details;
  }

  toJSON(): Record<string, unknown> {
    return {
      code: this.code,
      class: this.errorClass,
      retryable: this.retryable,
      message: this.message,
      ...(this.details ? { details: this.details } : {}),
    };
  }
}

/** One invalid configuration key. */
export interface ConfigIssue {
  /** Dotted key path, e.g. `platform.authUrl`. */
  path: string;
  message: string;
}

/** All configuration problems at once; the process exits with EXIT_CONFIG. */
export class ConfigError extends AgentError {
  readonly issues: readonly ConfigIssue[];
  constructor(issues: readonly ConfigIssue[], source?: string) {
    const where = source ? ` in ${source}` : '';
    const lines = issues.map((i) => `  - ${i.path || '(root)'}: ${i.message}`);
    super('CONFIG_INVALID', `configuration is invalid${where}:\n${lines.join('\n')}`, { class: 'config', retryable: false });
    this.name = 'ConfigError';
    this.issues = issues;
  }
}

/** An HTTP answer from the platform that was not a success. */
export class PlatformError extends AgentError {
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  constructor(code: string, message: string, options: AgentErrorOptions & { status?: number; retryAfterMs?: number } = {}) {
    super(code, message, options);
    this.name = 'PlatformError';
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** Process exit codes, distinct so that systemd and scripts can tell them apart. */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
/** Invalid configuration or usage: restarting will not help until a human fixes it. */
export const EXIT_CONFIG = 2;

export function isAgentError(e: unknown): e is AgentError {
  return e instanceof AgentError;
}

/** A one-line description of any thrown value, for logs and CLI output. */
export function describeError(e: unknown): string {
  if (e instanceof AgentError) return `${e.code}: ${e.message}`;
  if (e instanceof Error) return e.message;
  return String(e);
}
