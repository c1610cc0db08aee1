import type { Config } from '../config/load.js';
import { EXIT_CONFIG, EXIT_FAILURE, isAgentError } from '../errors.js';
import { oneShotFailure } from './failure-message.js';
import type { Logger } from '../log.js';
import { buildPlatform, type PlatformParts } from '../platform/build.js';
import type { Database } from '../store/database.js';
import { openStores } from '../store/stores.js';
import { systemClock } from '../system/clock.js';
import { cliLogger, loadCliConfig, openCliDatabase } from './context.js';

/**
 * What a one-shot platform command (register, device show) needs: configuration, the shared
 * database (the token pair is the daemon's too: rotation is serialised through it), the platform
 * parts, and a logger on stderr so stdout carries only the answer.
 */
export interface PlatformContext {
  config: Config;
  db: Database;
  logger: Logger;
  platform: PlatformParts;
  close(): Promise<void>;
}

export function openPlatformContext(configPath: string | undefined): PlatformContext {
  const config = loadCliConfig(configPath);
  const logger = cliLogger(config);
  const db = openCliDatabase(config, logger);
  const platform = buildPlatform({ config, records: openStores(db), logger, clock: systemClock });
  return {
    config,
    db,
    logger,
    platform,
    async close() {
      await platform.stop();
      db.close();
    },
  };
}

/**
 * A one-shot platform command: opens the context, runs `body`, reports a failure as `what` failed
 * (exit code by class, never a token) and closes the context either way.
 */
export async function runPlatformCommand(
  configPath: string | undefined,
  what: string,
  body: (ctx: PlatformContext) => Promise<void>,
): Promise<void> {
  const ctx = openPlatformContext(configPath);
  try {
    await body(ctx);
  } catch (e) {
    reportFailure(what, e, ctx.config);
  } finally {
    await ctx.close();
  }
}

/** Exit code and one line on stderr for a failed platform command; never a token. */
export function reportFailure(what: string, e: unknown, config?: Config): void {
  process.stderr.write(`telematics-agent: ${oneShotFailure(what, e, config)}\n`);
  process.exitCode = isAgentError(e) && e.errorClass === 'config' ? EXIT_CONFIG : EXIT_FAILURE;
}
