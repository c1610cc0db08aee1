import type { SchemaParts } from './schema-parts.js';
import type { Zod } from './zod.js';
import { CONFIG_DEFAULTS } from './defaults.js';

/** The `motion` and `ignition` sections, built with the schemas (schema.ts). */
export function motionSchemas(z: Zod, { nonEmpty }: Pick<SchemaParts, 'nonEmpty'>) {
  /** `motion`: the vehicle's day (trips, stops, odometer) from the full-rate fixes (src/motion). */
  const motionSchema = z
    .strictObject({
      enabled: z
        .boolean()
        .default(CONFIG_DEFAULTS.motion.enabled)
        .describe(
          'Send startMovingEvent/stopMovingEvent and, with an ignition input, startEngineEvent/stopEngineEvent (false for a platform that refuses them).',
        ),
      stopAfterS: z
        .number()
        .min(10)
        .max(3600)
        .default(CONFIG_DEFAULTS.motion.stopAfterS)
        .describe('Standing this long is a stop: a red light (30-40 s, rarely over 50) is not the end of a trip.'),
      departRadiusM: z
        .number()
        .min(10)
        .max(1000)
        .default(CONFIG_DEFAULTS.motion.departRadiusM)
        .describe(
          'A stopped vehicle moves again once this far from where it stood (or at 10 km/h for 5 s): queue creeping and jitter do not.',
        ),
    })
    .prefault({});

  /**
   * `ignition`: the engine input. Either a value file read by polling (a sysfs GPIO `value`, a hwmon
   * or IIO voltage) or a GPIO line through the character device; absent: no engine events.
   */
  const ignitionSchema = z
    .strictObject({
      file: nonEmpty.optional().describe('A value file polled for the ignition: on when the number in it is above onAbove.'),
      onAbove: z
        .number()
        .optional()
        .describe('With file: the ignition is on above this value (0 for a GPIO value, e.g. 9000 mV for a supply voltage).'),
      pollMs: z.number().int().min(50).max(10_000).default(CONFIG_DEFAULTS.ignition.pollMs).describe('With file: how often it is read.'),
      gpio: z
        .strictObject({
          chip: nonEmpty
            .default(CONFIG_DEFAULTS.ignition.gpio.chip)
            .describe(
              "The GPIO chip (gpiochip0, /dev/gpiochip0 or its number). The line is read by edge events through Debian's gpiod tools (2.x), which the package recommends.",
            ),
          line: z.number().int().min(0).describe('The line offset on the chip (gpioinfo gpiochip0 lists them).'),
          activeLow: z.boolean().default(CONFIG_DEFAULTS.ignition.gpio.activeLow).describe('The ignition is on when the line reads 0.'),
        })
        .optional()
        .describe(
          "A GPIO line through the character device, read by Debian's gpiod tools (gpioget at start, then gpiomon's edge events): needs the gpiod package (2.x).",
        ),
      debounceS: z
        .number()
        .min(0)
        .max(60)
        .default(CONFIG_DEFAULTS.ignition.debounceS)
        .describe('A change counts once it has held this long: a cranking dip (under 1 s) is not an engine stop.'),
    })
    .optional()
    .superRefine((i, ctx) => {
      if (!i) return;
      if (i.file === undefined && i.gpio === undefined)
        ctx.addIssue({
          code: 'custom',
          path: [],
          message: 'names no input: set ignition.file (with ignition.onAbove) or ignition.gpio, or remove ignition',
        });
      if (i.file !== undefined && i.gpio !== undefined)
        ctx.addIssue({ code: 'custom', path: ['gpio'], message: 'ignition.file and ignition.gpio are two inputs: keep one' });
      if (i.file !== undefined && i.onAbove === undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['onAbove'],
          message: 'is required with ignition.file: the value above which the ignition is on (e.g. 0 for a GPIO value file)',
        });
    });
  return { motionSchema, ignitionSchema };
}
