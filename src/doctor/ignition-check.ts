import type { Config } from '../config/load.js';
import { readIgnitionValue } from '../motion/ignition.js';
import { pass, skip, warn, fail, type CheckResult } from './check.js';

const NAME = 'ignition';

/**
 * The ignition input (ignition.file): readable, a plausible value, and the state it gives now.
 * Absent: engine events are off, which is a choice, not a fault.
 */
export async function checkIgnition(config: Config, read: (file: string) => Promise<number> = readIgnitionValue): Promise<CheckResult> {
  const ig = config.ignition;
  if (!config.motion.enabled) return skip(NAME, 'motion.enabled is false: no movement or engine events');
  if (ig?.file === undefined || ig.onAbove === undefined)
    return skip(NAME, 'not wired (no ignition in the configuration): no engine events');
  let value: number;
  try {
    value = await read(ig.file);
  } catch (e) {
    return fail(
      NAME,
      `ignition.file ${ig.file} cannot be read: ${(e as Error).message}`,
      'point ignition.file at the input (a GPIO value, a hwmon/IIO voltage) and let the service user read it',
    );
  }
  const state = value > ig.onAbove ? 'on' : 'off';
  // A value file of a GPIO reads 0 or 1; a voltage reads tens to tens of thousands. Far off either, the threshold is likely wrong.
  if (value < 0 || (ig.onAbove > 1 && value > ig.onAbove * 10))
    return warn(
      NAME,
      `ignition.file ${ig.file} reads ${value}, the ignition ${state} (onAbove ${ig.onAbove})`,
      'check ignition.onAbove against the readings with the engine off and on',
    );
  return pass(NAME, `ignition.file ${ig.file} reads ${value}: the ignition is ${state} (on above ${ig.onAbove})`);
}
