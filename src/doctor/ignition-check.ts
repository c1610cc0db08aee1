import type { Config } from '../config/load.js';
import { readIgnitionValue } from '../motion/ignition.js';
import { GPIOD_TOOLS, readGpioLine, type GpiodTools } from '../motion/gpiod-tools.js';
import { pass, skip, warn, fail, type CheckResult } from './check.js';

const NAME = 'ignition';

export interface IgnitionCheckOptions {
  /** The value file's number (default readIgnitionValue). */
  read?: (file: string) => Promise<number>;
  /** ignition.gpio's tools (default Debian's gpiod on PATH). */
  gpiodTools?: GpiodTools;
}

/**
 * The ignition input: the value file (ignition.file) readable, a plausible value, and the state it
 * gives now; the GPIO line (ignition.gpio) read once with gpioget, which needs the tool, the chip,
 * the line free and the permission, as gpiomon will. Absent: engine events are off, which is a
 * choice, not a fault.
 */
export async function checkIgnition(config: Config, o: IgnitionCheckOptions = {}): Promise<CheckResult> {
  const ig = config.ignition;
  if (!config.motion.enabled) return skip(NAME, 'motion.enabled is false: no movement or engine events');
  if (ig?.gpio !== undefined) return checkGpio(ig.gpio, o.gpiodTools ?? GPIOD_TOOLS);
  if (ig?.file === undefined || ig.onAbove === undefined)
    return skip(NAME, 'not wired (no ignition in the configuration): no engine events');
  let value: number;
  try {
    value = await (o.read ?? readIgnitionValue)(ig.file);
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

async function checkGpio(gpio: { chip: string; line: number; activeLow: boolean }, tools: GpiodTools): Promise<CheckResult> {
  const where = `ignition.gpio ${gpio.chip} line ${gpio.line}${gpio.activeLow ? ' (active low)' : ''}`;
  let on: boolean;
  try {
    on = await readGpioLine(gpio, tools);
  } catch (e) {
    // While the daemon runs, its gpiomon holds the line: busy is then the expected answer.
    const busy = /is busy/.test((e as Error).message);
    return (busy ? warn : fail)(
      NAME,
      `${where} cannot be read: ${(e as Error).message}`,
      busy
        ? 'the running agent holds the line (its gpiomon): `telematics-agent status` shows the ignition; stop it to read the line here'
        : 'install gpiod (2.x), check the chip and line with gpiodetect and gpioinfo, and run doctor as the service user (sudo -u telematics-agent)',
    );
  }
  return pass(NAME, `${where} reads ${on ? 1 : 0} through gpioget: the ignition is ${on ? 'on' : 'off'}`);
}
