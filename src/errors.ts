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

/**
 * Every code the agent raises, in one list: logs, status output, the CLI's messages and tests
 * match on these strings, so they are part of the interface. Add a code here before using it.
 */
export type ErrorCode =
  // Answers of the daemon's status socket (src/socket/server.ts, src/socket/fix-publisher.ts).
  | 'BAD_REQUEST'
  | 'UNKNOWN_REQUEST'
  | 'REQUEST_TOO_LONG'
  | 'SNAPSHOT_FAILED'
  | 'SLOW_SUBSCRIBER'
  | 'STATUS_ACCESS_DENIED'
  | 'TOO_MANY_CLIENTS'
  | 'ABORTED'
  | 'CONFIG_INVALID'
  | 'CREDENTIALS_REJECTED'
  | 'DAEMON_BAD_ANSWER'
  | 'DAEMON_FEED_CLOSED'
  | 'DAEMON_FEED_ERROR'
  | 'DAEMON_NOT_ANSWERING'
  | 'DAEMON_NOT_RUNNING'
  | 'DAEMON_NO_FIXES'
  | 'DAEMON_SOCKET_DENIED'
  | 'DAEMON_SOCKET_ERROR'
  | 'DAEMON_STATUS_ERROR'
  | 'DAEMON_STOPPING'
  | 'AGENT_ALREADY_RUNNING'
  | 'DATABASE_MISSING'
  | 'DATABASE_NOT_A_FILE'
  | 'DATABASE_UNOPENABLE'
  | 'NATIVE_MODULE_MISMATCH'
  | 'DATA_DIR_NOT_DIRECTORY'
  | 'DATA_DIR_UNUSABLE'
  | 'DEVICE_ID_UNAVAILABLE'
  | 'DEVICE_REGISTRATION_FAILED'
  | 'DEVICE_RESPONSE_MALFORMED'
  | 'GNSS_NOT_CONFIGURED'
  | 'INTERRUPTED'
  | 'LOCATION_INPUT_EMPTY'
  | 'LOCATION_INPUT_NOT_JSON'
  | 'LOCATION_INPUT_TOO_LARGE'
  | 'LOCATION_INPUT_UNREADABLE'
  | 'LOCATION_MOVING'
  | 'LOCATION_NO_3D_FIX'
  | 'LOCATION_SPREAD_TOO_LARGE'
  | 'LOCATION_TOO_FEW_FIXES'
  | 'LOCATION_UPLOAD_FAILED'
  | 'LOCATION_UPLOAD_FORBIDDEN'
  | 'LOCATION_UPLOAD_MISCONFIGURED'
  | 'LOCATION_UPLOAD_NOT_FOUND'
  | 'LOCATION_UPLOAD_UNAUTHORIZED'
  | 'LOCATION_UPLOAD_UNAVAILABLE'
  | 'NMEA_INPUT_UNREADABLE'
  | 'PLATFORM_BAD_REQUEST'
  | 'PLATFORM_CA_INVALID'
  | 'PLATFORM_DISPATCHER_CLOSED'
  | 'PLATFORM_CA_UNREADABLE'
  | 'PLATFORM_FORBIDDEN'
  | 'PLATFORM_HTTP_ERROR'
  | 'PLATFORM_NOT_FOUND'
  | 'PLATFORM_NOT_JSON'
  | 'PLATFORM_RATE_LIMITED'
  | 'PLATFORM_RESPONSE_TOO_LARGE'
  | 'PLATFORM_STREAM_REFUSED'
  | 'PLATFORM_STREAM_RESET'
  | 'PLATFORM_GOAWAY'
  | 'PLATFORM_TIMEOUT'
  | 'PLATFORM_TLS'
  | 'PLATFORM_TLS_CLOCK'
  | 'PLATFORM_UNAUTHORIZED'
  | 'PLATFORM_UNAVAILABLE'
  | 'PLATFORM_UNREACHABLE'
  | 'RECEIVER_HELD_BY_DAEMON'
  | 'STATUS_TOO_LARGE'
  | 'STORE_CORRUPT'
  | 'STORE_DISK_FULL'
  | 'STORE_RESTARTING'
  | 'TOKEN_LOCK_BUSY'
  | 'TOKEN_PAIR_MALFORMED'
  | 'UPLOAD_FAILED';

export interface AgentErrorOptions {
  cause?: unknown;
  retryable?: boolean;
  class?: ErrorClass;
  /** Extra structured facts for logs and status (never secrets). */
  details?: Record<string, unknown>;
}

export class AgentError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly errorClass: ErrorClass;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: AgentErrorOptions = {}) {
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
  constructor(code: ErrorCode, message: string, options: AgentErrorOptions & { status?: number; retryAfterMs?: number } = {}) {
    super(code, message, options);
    this.name = 'PlatformError';
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/**
 * The two faults of the database file that no retry cures, recognised in one place (here, so that
 * a component that only holds record interfaces, like platform/auth/token-lock.ts, can tell them
 * without seeing the store): store/store-faults.ts guardDatabase() raises them as StoreError.
 *
 * - STORE_DISK_FULL (SQLITE_FULL, ENOSPC, a WAL index that cannot grow): transient. Callers keep
 *   what they could not write in memory and try again; the owner releases the ballast (ballast.ts).
 * - STORE_CORRUPT (SQLITE_CORRUPT*, SQLITE_NOTADB): the file must not be used any more; the owner
 *   salvages what is readable into a fresh file (salvage.ts).
 */
export type StoreFaultKind = 'disk-full' | 'corrupt';

export const STORE_DISK_FULL = 'STORE_DISK_FULL';
export const STORE_CORRUPT = 'STORE_CORRUPT';

const DISK_FULL_CODES = new Set(['SQLITE_FULL', 'ENOSPC', 'SQLITE_IOERR_SHMSIZE']);
const CORRUPT_CODES = new Set([
  'SQLITE_CORRUPT',
  'SQLITE_NOTADB',
  'SQLITE_CORRUPT_VTAB',
  'SQLITE_CORRUPT_SEQUENCE',
  'SQLITE_CORRUPT_INDEX',
]);

export class StoreError extends AgentError {
  readonly kind: StoreFaultKind;
  /** The SQLite (or errno) code underneath. */
  readonly sqliteCode: string;
  constructor(kind: StoreFaultKind, sqliteCode: string, message: string, cause: unknown) {
    super(kind === 'disk-full' ? STORE_DISK_FULL : STORE_CORRUPT, message, {
      cause,
      class: kind === 'disk-full' ? 'transient' : 'internal',
      retryable: kind === 'disk-full',
      details: { sqliteCode },
    });
    this.name = 'StoreError';
    this.kind = kind;
    this.sqliteCode = sqliteCode;
  }
}

/** Which store fault `e` is, raw (a SqliteError or errno error) or already a StoreError. */
export function storeFaultOf(e: unknown): StoreFaultKind | undefined {
  if (e instanceof StoreError) return e.kind;
  const code = (e as { code?: unknown })?.code;
  if (typeof code !== 'string') return undefined;
  if (DISK_FULL_CODES.has(code)) return 'disk-full';
  if (CORRUPT_CODES.has(code)) return 'corrupt';
  return undefined;
}

export function isDiskFull(e: unknown): boolean {
  return storeFaultOf(e) === 'disk-full';
}

export function isCorrupt(e: unknown): boolean {
  return storeFaultOf(e) === 'corrupt';
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

/**
 * Turns any thrown value into the `err` field of a log line, in one shape:
 * `{ code?, class?, retryable?, type?, message, details?, stack? }`.
 * An AgentError is expected (the agent raised it on purpose, its code says what happened): no
 * stack, unless its class is 'internal'. Anything else is unexpected (a bug, a library's surprise),
 * and its stack is what a maintainer needs, so it is kept, with the chain of causes.
 */
export function errorFields(e: unknown, depth = 0): Record<string, unknown> {
  if (e instanceof AgentError) {
    const cause = e.errorClass === 'internal' && e.cause !== undefined && depth < 3 ? errorFields(e.cause, depth + 1) : undefined;
    return {
      ...e.toJSON(),
      ...(e.errorClass === 'internal' && e.stack ? { stack: e.stack } : {}),
      ...(cause ? { cause } : {}),
    };
  }
  if (e instanceof Error) {
    const code = (e as { code?: unknown }).code;
    const cause = e.cause !== undefined && depth < 3 ? errorFields(e.cause, depth + 1) : undefined;
    return {
      ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
      type: e.name,
      message: e.message,
      ...(e.stack ? { stack: e.stack } : {}),
      ...(cause ? { cause } : {}),
    };
  }
  return { type: typeof e, message: String(e) };
}
