import type { Config } from '../config/load.js';
import { AgentError } from '../errors.js';
import { ReplaySource } from '../gnss/sources/replay-source.js';
import { SerialSource } from '../gnss/sources/serial-source.js';
import type { Logger } from '../log.js';
import { statusSocketPath } from '../socket/path.js';
import { DaemonFixFeed, isDaemonListening } from './daemon-feed.js';
import type { FixFeed } from './fix-feed.js';
import { GnssFixFeed } from './gnss-feed.js';
import { createNmeaSource } from '../gnss/sources/create-source.js';

export type FeedChoice = 'auto' | 'daemon' | 'receiver';

/**
 * Where `location here` reads fixes. `auto`: from the running daemon when one listens on the status
 * socket (it holds the serial port; a second reader would split the receiver's bytes), otherwise
 * straight from the configured receiver (`gnss.path`) or replay file (`gnss.replayFile`).
 * `receiver` is refused while the daemon runs with a serial port, for the same reason.
 */
export async function chooseFeed(config: Config, logger: Logger, choice: FeedChoice): Promise<FixFeed> {
  const socketPath = statusSocketPath(config);
  if (choice === 'daemon' || (choice === 'auto' && (await isDaemonListening(socketPath)))) {
    if (choice === 'daemon' && !(await isDaemonListening(socketPath))) {
      throw new AgentError(
        'DAEMON_NOT_RUNNING',
        `no daemon is listening on ${socketPath} (status.socketPath); start it, or use --source receiver`,
        { class: 'config', retryable: false },
      );
    }
    return new DaemonFixFeed({ socketPath });
  }
  const g = config.gnss;
  // A replay file can be read twice; a serial port cannot be shared with the daemon reading it.
  // gpsd shares the receiver with any number of readers.
  if (choice === 'receiver' && g.replayFile === undefined && g.gpsd === undefined && (await isDaemonListening(socketPath))) {
    throw new AgentError(
      'RECEIVER_HELD_BY_DAEMON',
      `the running daemon holds the receiver ${g.path ?? ''}: a second reader would split its data between the two; use --source daemon (or auto), or stop the daemon first`,
      { class: 'config', retryable: false },
    );
  }
  const common = {
    maxLineLength: g.maxLineLength,
    rollover: { minDateMarginDays: config.quality.minDateMarginDays },
    logger: logger.child({ component: 'gnss' }),
  };
  if (g.replayFile !== undefined) {
    const source = new ReplaySource({ file: g.replayFile, speed: g.replaySpeed, logger: logger.child({ component: 'gnss' }) });
    return new GnssFixFeed({ source, description: `the replay of ${g.replayFile}`, ...common });
  }
  if (g.gpsd !== undefined) {
    const source = createNmeaSource(g, logger.child({ component: 'gnss' }));
    return new GnssFixFeed({ source, description: `the receiver through gpsd at ${g.gpsd}`, ...common });
  }
  if (g.path === undefined)
    throw new AgentError('GNSS_NOT_CONFIGURED', 'set gnss.path (the receiver, e.g. /dev/ttyACM0) or gnss.replayFile in the configuration', {
      class: 'config',
      retryable: false,
    });
  const source = new SerialSource({ path: g.path, baudRate: g.baudRate, logger: logger.child({ component: 'gnss' }) });
  return new GnssFixFeed({ source, description: `the receiver on ${g.path}`, ...common });
}
