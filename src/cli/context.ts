import { existsSync } from 'node:fs';
import { pino } from 'pino';
import { loadConfig, type Config } from '../config/load.js';
import { AgentError } from '../errors.js';
import { createLogger, type Logger } from '../log.js';
import { databasePath, openDatabase, type Database } from '../store/database.js';

/**
 * The one-shot commands' setup, written once: the configuration (--config, else
 * $TELEMATICS_AGENT_CONFIG or the default file), a logger on stderr so that stdout carries only the
 * answer, and the agent's database (shared with a running daemon: the token pair rotates through it).
 */
export function loadCliConfig(configPath: string | undefined): Config {
  return loadConfig(configPath === undefined ? {} : { path: configPath });
}

/**
 * JSON log lines on stderr, synchronously (the process may exit right after). `'command'`: the
 * command prints its own outcome as a sentence, so the components' lines appear only when asked
 * for (log.level other than the default info).
 */
export function cliLogger(config: Config, level: 'command' | 'warn' = 'command'): Logger {
  return createLogger({
    level: level === 'warn' ? 'warn' : config.log.level === 'info' ? 'fatal' : config.log.level,
    destination: pino.destination({ dest: 2, sync: true }),
  });
}

export interface CliDatabaseOptions {
  /** A missing database is an error (DATABASE_MISSING), not a new file: for commands that only read or repair. */
  mustExist?: boolean;
  /** Wait this long for the daemon's commit instead of failing at once (it commits about once a second). */
  busyTimeoutMs?: number;
}

export function openCliDatabase(config: Config, logger: Logger, o: CliDatabaseOptions = {}): Database {
  const file = databasePath(config.dataDir);
  if (o.mustExist && !existsSync(file))
    throw new AgentError('DATABASE_MISSING', `no database at ${file}: the agent has not run with this dataDir yet (check dataDir)`, {
      class: 'config',
    });
  return openDatabase({ dataDir: config.dataDir, logger, ...(o.busyTimeoutMs !== undefined ? { busyTimeoutMs: o.busyTimeoutMs } : {}) });
}
