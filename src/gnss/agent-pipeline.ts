import type { Config } from '../config/load.js';
import type { Fix, FixSink } from '../fix/fix.js';
import type { Logger } from '../log.js';
import type { Clock } from '../system/clock.js';
import { GnssPipeline } from './pipeline.js';
import { createNmeaSource } from './sources/create-source.js';
import type { NmeaSource } from './sources/source.js';

/**
 * The daemon's pipeline from the configuration (agent.ts): the receiver given (benches) or the one
 * gnss.path / gnss.gpsd / gnss.replayFile names, recorded fixes to `sink`, every decoded epoch to
 * `onEpoch` (the status socket's `location here` subscribers get every epoch, not only recorded ones).
 */
export function agentPipeline(o: {
  config: Config;
  logger: Logger;
  clock: Clock;
  source?: NmeaSource | undefined;
  sink: FixSink;
  onEpoch: (fix: Fix) => void;
  onAccepted?: ((fix: Fix) => void) | undefined;
}): GnssPipeline {
  return new GnssPipeline({
    source: o.source ?? createNmeaSource(o.config.gnss, o.logger.child({ component: 'gnss-source' }), o.clock),
    logger: o.logger.child({ component: 'gnss' }),
    sink: o.sink,
    clock: o.clock,
    onEpoch: o.onEpoch,
    ...(o.onAccepted ? { onAccepted: o.onAccepted } : {}),
    quality: o.config.quality,
    recording: o.config.recording,
    maxLineLength: o.config.gnss.maxLineLength,
  });
}
