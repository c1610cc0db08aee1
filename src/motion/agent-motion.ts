import type { Config } from '../config/load.js';
import type { Logger } from '../log.js';
import { MotionTracker } from './motion-tracker.js';

/**
 * The motion tracker of the daemon (agent.ts), or none with motion.enabled false. Still below
 * recording.stoppedSpeedKmh is the same "stopped" as the recording policy's, so the positions of a
 * stop and its event agree.
 */
export function buildMotion(config: Config, logger: Logger): MotionTracker | undefined {
  if (!config.motion.enabled) return undefined;
  return new MotionTracker({
    movement: {
      stopAfterS: config.motion.stopAfterS,
      departRadiusM: config.motion.departRadiusM,
      stillSpeedKmh: config.recording.stoppedSpeedKmh,
    },
    logger: logger.child({ component: 'motion' }),
    ignitionWired: config.ignition !== undefined,
  });
}
