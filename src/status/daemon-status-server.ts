import type { Config } from '../config/load.js';
import { errorFields } from '../errors.js';
import type { Logger } from '../log.js';
import type { FixPublisher } from '../socket/fix-publisher.js';
import { statusSocketPath } from '../socket/path.js';
import { StatusServer } from '../socket/server.js';
import { daemonStatusProvider } from './agent-status.js';

/**
 * The daemon's status socket (agent.ts). It is a window, not a duty: when it cannot open, the
 * agent runs on without it and says so; undefined then.
 */
export async function startDaemonStatus(o: {
  config: Config;
  logger: Logger;
  fixes: FixPublisher;
  sources: Parameters<typeof daemonStatusProvider>[0];
}): Promise<StatusServer | undefined> {
  const server = new StatusServer({
    socketPath: statusSocketPath(o.config),
    provider: daemonStatusProvider(o.sources),
    logger: o.logger.child({ component: 'status' }),
    fixes: o.fixes,
    clock: o.sources.clock,
  });
  try {
    await server.start();
    return server;
  } catch (e) {
    o.logger.error(
      { err: errorFields(e), socketPath: server.socketPath },
      'status socket could not be opened; `telematics-agent status` falls back to reading the database',
    );
    return undefined;
  }
}
