import { pino, type Logger, type LevelWithSilent, type DestinationStream } from 'pino';

export type { Logger } from 'pino';

/**
 * Keys whose values are secrets wherever they appear (at any of the first levels of nesting).
 * pino's redaction works by path; `*.x` covers one level of nesting, so list both forms.
 */
const SECRET_KEYS = [
  'authorization',
  'Authorization',
  'password',
  'access_token',
  'refresh_token',
  'id_token',
  'accessToken',
  'refreshToken',
  'idToken',
  'token',
];

export const REDACT_PATHS: string[] = SECRET_KEYS.flatMap((k) => [k, `*.${k}`, `*.*.${k}`, `headers.${k}`, `req.headers.${k}`]);

export interface LoggerOptions {
  level?: LevelWithSilent | string;
  /** Where to write; default synchronous stdout (journald reads it line by line). */
  destination?: DestinationStream;
  name?: string;
}

/** The root logger: JSON lines, synchronous, secrets redacted. Built once by the composition root. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const destination = options.destination ?? pino.destination({ dest: 1, sync: true });
  return pino(
    {
      name: options.name ?? 'telematics-agent',
      level: options.level ?? 'info',
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
}

/** A logger that discards everything, for tests and CLI commands that print their own output. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
