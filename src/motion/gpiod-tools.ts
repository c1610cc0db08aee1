import { execFile } from 'node:child_process';

/**
 * Debian's libgpiod v2 tools (package gpiod, 2.2.1 in Debian 13), which ignition.gpio runs as
 * children: no native module to cross-compile (docs/decisions/ignition-gpio.md). Their options as
 * `gpiomon --help` and gpiomon(1) of libgpiod v2.2.1 give them; gpiod 1.x (Debian 12) takes others
 * and is refused with the reason.
 */
export interface GpiodTools {
  gpiomon: string;
  gpioget: string;
}

/** On PATH, where Debian's gpiod installs them (/usr/bin). */
export const GPIOD_TOOLS: GpiodTools = { gpiomon: 'gpiomon', gpioget: 'gpioget' };

export interface GpioLine {
  chip: string;
  line: number;
  activeLow: boolean;
}

/**
 * gpiomon's arguments: `--banner` prints "Monitoring line '17'..." once the line is requested (so a
 * start that fails says why on stderr before it), and each edge prints as `-F '%E %S'` makes it:
 * "rising 5342.123456789" (the edge with active-low applied, and the kernel's monotonic seconds).
 */
export function gpiomonArgs(l: GpioLine): string[] {
  return ['--banner', '-c', l.chip, ...(l.activeLow ? ['-l'] : []), '-F', '%E %S', String(l.line)];
}

/** gpioget's: `--numeric` prints the line's value as 1 (active) or 0, active-low applied. */
export function gpiogetArgs(l: GpioLine): string[] {
  return ['--numeric', '-c', l.chip, ...(l.activeLow ? ['-l'] : []), String(l.line)];
}

/** One line of gpiomon's output: an edge (true: the line became active), the banner, or neither. */
export function parseGpiomonLine(text: string): boolean | 'banner' | undefined {
  const t = text.trim();
  if (t.startsWith('Monitoring line')) return 'banner';
  const edge = /^(rising|falling)\b/.exec(t)?.[1];
  return edge === undefined ? undefined : edge === 'rising';
}

/** How a tool ended, for explainGpiodFailure. */
export interface ToolEnd {
  stderr: string;
  code?: number | null;
  signal?: string | null;
  /** The spawn's own error (ENOENT: not installed). */
  spawnError?: NodeJS.ErrnoException;
}

/**
 * One clear sentence from a tool's stderr (its messages as libgpiod v2's tools-common.c words
 * them: "cannot find GPIO chip character device", "offset 99 is out of range on chip",
 * "unable to request lines on chip ...: Device or resource busy", "...: Permission denied").
 */
export function explainGpiodFailure(tool: string, l: GpioLine, end: ToolEnd): string {
  const err = end.stderr;
  const dev = chipDevice(l.chip);
  if (end.spawnError?.code === 'ENOENT')
    return `${tool} not found: ignition.gpio needs Debian's gpiod package (apt-get install gpiod, libgpiod v2)`;
  if (end.spawnError) return `${tool} cannot be run: ${end.spawnError.message}`;
  if (/unrecognized option|invalid option|try .* --help/.test(err))
    return `${tool} does not take libgpiod v2's options (gpiod 1.x, as Debian 12 ships?): ignition.gpio needs gpiod 2.x (Debian 13)`;
  if (/cannot find GPIO chip/.test(err)) return `GPIO chip ${l.chip} not found (${dev}): gpiodetect lists the chips`;
  if (/out of range on chip|cannot find line/.test(err)) return `${l.chip} has no line ${l.line}: gpioinfo ${l.chip} lists its lines`;
  if (/Permission denied|Operation not permitted/.test(err))
    return `no access to ${dev}: the service user needs the gpio group (Raspberry Pi OS gives /dev/gpiochip* to root:gpio 0660) and the unit DeviceAllow=char-gpiochip rw`;
  if (/Device or resource busy/.test(err))
    return `line ${l.line} of ${l.chip} is busy: another program holds it (gpioinfo ${l.chip} names its consumer)`;
  const first = err.split('\n').find((s) => s.trim() !== '');
  const how = end.signal ? `was killed by ${end.signal}` : `exited with code ${end.code ?? '?'}`;
  return `${tool} ${how}${first ? `: ${first.trim().slice(0, 200)}` : ''}`;
}

/** The device a chip names (libgpiod takes a number, a name or a path). */
export function chipDevice(chip: string): string {
  return chip.startsWith('/') ? chip : /^\d+$/.test(chip) ? `/dev/gpiochip${chip}` : `/dev/${chip}`;
}

/** The line's value now (gpioget), active-low applied; rejects with explainGpiodFailure's sentence. */
export function readGpioLine(l: GpioLine, tools: GpiodTools = GPIOD_TOOLS, timeoutMs = 5000): Promise<boolean> {
  return new Promise((resolve, reject) => {
    execFile(tools.gpioget, gpiogetArgs(l), { timeout: timeoutMs, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) {
        const e = error as NodeJS.ErrnoException & { code?: unknown; signal?: NodeJS.Signals | null };
        const spawned = typeof e.code === 'number' || e.signal;
        const end: ToolEnd = spawned
          ? { stderr, code: typeof e.code === 'number' ? e.code : null, signal: e.signal ?? null }
          : { stderr, spawnError: e };
        return reject(new Error(explainGpiodFailure('gpioget', l, end)));
      }
      const value = stdout.trim();
      if (value !== '0' && value !== '1')
        return reject(new Error(`gpioget printed "${value.slice(0, 40)}", not 0 or 1 (libgpiod v2's --numeric)`));
      resolve(value === '1');
    });
  });
}
