import type { Config } from '../config/load.js';
import type { Logger } from '../log.js';
import { systemTimers, type Clock, type Timers } from '../system/clock.js';
import { GpioIgnitionInput } from './gpio-ignition.js';
import type { GpiodTools } from './gpiod-tools.js';
import { FileIgnitionInput } from './file-ignition.js';
import { MotionTracker } from './motion-tracker.js';

/**
 * The motion tracker of the daemon (agent.ts), or none with motion.enabled false. Still below
 * recording.stoppedSpeedKmh is the same "stopped" as the recording policy's, so the positions of a
 * stop and its event agree. An ignition change is dated by the receiver's clock: the last epoch's
 * GNSS time plus the monotonic time since it was decoded (never the host's wall clock).
 */
export function buildMotion(o: {
  config: Config;
  logger: Logger;
  clock: Clock;
  timers?: Timers;
  lastEpoch: () => { gnssMs: number; monoMs: number } | undefined;
  /** ignition.gpio's tools (AgentOptions.gpiodTools; default Debian's gpiod on PATH). */
  gpiodTools?: GpiodTools;
}): MotionTracker | undefined {
  const { config } = o;
  if (!config.motion.enabled) return undefined;
  const logger = o.logger.child({ component: 'motion' });
  const ig = config.ignition;
  let tracker: MotionTracker | undefined;
  const timers = o.timers ?? systemTimers;
  const onChange = (on: boolean, monoMs: number): void => {
    const epoch = o.lastEpoch();
    tracker?.ignition(on, epoch ? epoch.gnssMs + (monoMs - epoch.monoMs) : undefined);
  };
  const input =
    ig?.file !== undefined && ig.onAbove !== undefined
      ? new FileIgnitionInput({
          file: ig.file,
          onAbove: ig.onAbove,
          pollMs: ig.pollMs,
          debounceS: ig.debounceS,
          clock: o.clock,
          timers,
          logger,
          onChange,
        })
      : ig?.gpio !== undefined
        ? new GpioIgnitionInput({
            ...ig.gpio,
            debounceS: ig.debounceS,
            clock: o.clock,
            timers,
            logger,
            ...(o.gpiodTools ? { tools: o.gpiodTools } : {}),
            onChange,
          })
        : undefined;
  tracker = new MotionTracker({
    movement: {
      stopAfterS: config.motion.stopAfterS,
      departRadiusM: config.motion.departRadiusM,
      stillSpeedKmh: config.recording.stoppedSpeedKmh,
    },
    logger,
    ignitionWired: input !== undefined,
    ...(input ? { ignitionInput: input } : {}),
  });
  return tracker;
}
