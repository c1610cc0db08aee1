import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Config } from '../config/load.js';
import { IgnitionFileError, readIgnitionValue } from '../motion/file-ignition.js';
import {
  explainGpiodFailure,
  GPIOD_TOOLS,
  gpiomonArgs,
  parseGpiomonLine,
  readGpioLine,
  type GpiodTools,
  type GpioLine,
} from '../motion/gpiod-tools.js';
import { pass, skip, warn, fail, type CheckResult } from './check.js';

const NAME = 'ignition';

export interface IgnitionCheckOptions {
  /** The value file's number (default readIgnitionValue). */
  read?: (file: string) => Promise<number>;
  /** ignition.gpio's tools (default Debian's gpiod on PATH). */
  gpiodTools?: GpiodTools;
  /** How long gpiomon is let run before it counts as started (default 1 s). */
  gpiomonProbeMs?: number;
}

/**
 * The ignition input: the value file (ignition.file) readable, a plausible value, and the state it
 * gives now; the GPIO line (ignition.gpio) read once with gpioget, which needs the tool, the chip,
 * the line free and the permission, then gpiomon run as the daemon runs it for a second (the tool
 * may be missing or 1.x where gpioget is 2.x, or the line may not give edges). Absent: engine
 * events are off, which is a choice, not a fault.
 */
export async function checkIgnition(config: Config, o: IgnitionCheckOptions = {}): Promise<CheckResult> {
  const ig = config.ignition;
  if (!config.motion.enabled) return skip(NAME, 'motion.enabled is false: no movement or engine events');
  if (ig?.gpio !== undefined) return checkGpio(ig.gpio, o.gpiodTools ?? GPIOD_TOOLS, o.gpiomonProbeMs ?? 1000);
  if (ig?.file === undefined || ig.onAbove === undefined)
    return skip(NAME, 'not wired (no ignition in the configuration): no engine events');
  let value: number;
  try {
    value = await (o.read ?? readIgnitionValue)(ig.file);
  } catch (e) {
    const known = e instanceof IgnitionFileError;
    return fail(
      NAME,
      `ignition.file ${known ? e.problem : `${ig.file} cannot be read: ${(e as Error).message}`}`,
      (known ? e.fix : undefined) ??
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

async function checkGpio(gpio: GpioLine, tools: GpiodTools, probeMs: number): Promise<CheckResult> {
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
  const gpiomon = await tryGpiomon(gpio, tools, probeMs);
  if (gpiomon !== undefined)
    return fail(
      NAME,
      `${where} reads ${on ? 1 : 0} through gpioget, but gpiomon, which the agent runs to watch it, fails: ${gpiomon}`,
      /not found|options/.test(gpiomon)
        ? "install gpiod 2.x (Debian 13's gpiod package, libgpiod v2): the agent runs its gpiomon"
        : 'check the line with gpioinfo (a line of a chip without interrupts gives no edges) and run doctor as the service user',
    );
  return pass(NAME, `${where} reads ${on ? 1 : 0} through gpioget and gpiomon watches it: the ignition is ${on ? 'on' : 'off'}`);
}

/**
 * gpiomon started as the daemon starts it, ended after its banner (the line requested) or probeMs:
 * undefined when it took the options and the line, else why not in explainGpiodFailure's sentence.
 * Never waits on the child past probeMs: a gpiomon that ignores SIGTERM is left to end alone.
 */
function tryGpiomon(gpio: GpioLine, tools: GpiodTools, probeMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const child = spawn(tools.gpiomon, gpiomonArgs(gpio), { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let spawnError: NodeJS.ErrnoException | undefined;
    let done = false;
    const finish = (why: string | undefined): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      child.kill('SIGTERM');
      child.stdout.destroy();
      child.stderr.destroy();
      child.unref();
      resolve(why);
    };
    // Still running after probeMs without a banner: it took the options (1.x refuses them at once).
    const timer = setTimeout(() => finish(undefined), probeMs);
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      if (stderr.length < 4096) stderr += chunk;
    });
    createInterface({ input: child.stdout }).on('line', (text) => {
      if (parseGpiomonLine(text) === 'banner') finish(undefined);
    });
    child.on('error', (e: NodeJS.ErrnoException) => {
      spawnError = e;
    });
    child.on('close', (code, signal) =>
      finish(explainGpiodFailure('gpiomon', gpio, spawnError ? { stderr, spawnError } : { stderr, code, signal })),
    );
  });
}
