import { ConfigError, EXIT_CONFIG, EXIT_FAILURE, EXIT_OK, describeError, isAgentError, errorFields } from './errors.js';
import { tuneV8ForDaemon } from './daemon-v8.js';
import type { AgentOptions } from './agent-options.js';

// The daemon process around the Agent (configuration, lock, signals, exit codes), beside the
// composition root rather than in cli/: `run`, the demo's daemon and the end-to-end tests' daemons
// all start it, and the demo must not import a command.

/**
 * runDaemon as its own process entry (the demo's daemon, the end-to-end tests' daemons): the V8
 * settings and the exit codes `telematics-agent run` gives.
 */
export async function runDaemonEntry(configPath: string | undefined, extra: Pick<AgentOptions, 'tuning'>): Promise<void> {
  tuneV8ForDaemon();
  try {
    await runDaemon(configPath, extra);
  } catch (e) {
    process.stderr.write(`telematics-agent: ${e instanceof ConfigError ? e.message : describeError(e)}\n`);
    process.exitCode = isAgentError(e) && e.errorClass === 'config' ? EXIT_CONFIG : EXIT_FAILURE;
  }
}

/**
 * The daemon until SIGTERM/SIGINT. `extra`: what the demo and the end-to-end tests add beside the
 * configuration (their shorter retry waits); `run` passes nothing.
 */
export async function runDaemon(configPath: string | undefined, extra: Pick<AgentOptions, 'tuning'> = {}): Promise<void> {
  const [
    { Agent },
    { loadConfig },
    { createLogger },
    { ensureDataDir },
    { DaemonLocks },
    { runDir },
    { assertNativeModules },
    { releaseConfigSchemas },
  ] = await Promise.all([
    import('./agent.js'),
    import('./config/load.js'),
    import('./log.js'),
    import('./store/database.js'),
    import('./system/daemon-locks.js'),
    import('./socket/path.js'),
    import('./system/native-modules.js'),
    import('./config/schema.js'),
  ]);
  const config = loadConfig(configPath === undefined ? {} : { path: configPath });
  // The daemon never validates again: zod and the schemas go (about 4 MB of its memory).
  releaseConfigSchemas();
  // The daemon's logger is not the one-shot commands' cliLogger: its lines are the service's
  // journal (stdout, at log.level, asynchronous), not a command's stderr kept quiet at info; and
  // the Agent opens the database itself (openCliDatabase is for commands beside a running daemon).
  // One agent per dataDir, decided before the receiver, the database or the status socket is touched.
  const logger = createLogger({ level: config.log.level });
  // A card that is read-only is no reason to stop: the agent runs from memory and
  // takes the data directory's lock once the card is writable (system/daemon-locks.ts).
  let lock: ReturnType<typeof DaemonLocks.acquire>;
  try {
    assertNativeModules();
    try {
      ensureDataDir(config.dataDir);
    } catch (e) {
      if (!isAgentError(e) || e.details?.readOnly !== true) throw e;
    }
    lock = DaemonLocks.acquire({ dataDir: config.dataDir, runDir: runDir(), logger });
  } catch (e) {
    if (!isAgentError(e) || e.errorClass !== 'config') throw e;
    process.stderr.write(`telematics-agent: ${e.message}\n`);
    process.exitCode = EXIT_CONFIG;
    return;
  }
  const agent = new Agent({ config, logger, locks: lock, ...extra });

  let signalled: NodeJS.Signals | undefined;
  let wake: (() => void) | undefined;
  const stopRequested = new Promise<void>((resolve) => (wake = resolve));
  const onSignal = (sig: NodeJS.Signals): void => {
    if (signalled) {
      logger.warn({ signal: sig }, 'second signal: exiting without waiting for the clean stop');
      process.exit(EXIT_FAILURE);
    }
    signalled = sig;
    logger.info({ signal: sig }, 'stopping');
    wake?.();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  // A bug must not leave a half-dead daemon: log it and exit so that systemd restarts us.
  const fatal = (e: unknown): void => {
    logger.fatal({ err: errorFields(e) }, 'unexpected error: exiting for a restart');
    process.exit(EXIT_FAILURE);
  };
  process.on('uncaughtException', fatal);
  process.on('unhandledRejection', fatal);

  try {
    await agent.start();
  } catch (e) {
    await agent.stop();
    lock.release();
    if (isAgentError(e) && e.errorClass === 'config') {
      process.stderr.write(`telematics-agent: ${describeError(e)}\n`);
      process.exitCode = EXIT_CONFIG;
      return;
    }
    throw e;
  }
  await stopRequested;
  await agent.stop();
  lock.release();
  process.exitCode = EXIT_OK;
  // Anything still holding the loop (a stuck socket) must not keep a stopped daemon alive.
  setTimeout(() => process.exit(EXIT_OK), 2000).unref();
}
