import { parseGpsdAddress } from './gpsd-address.js';
import type { Zod } from './zod.js';
import { CONFIG_DEFAULTS } from './defaults.js';

/**
 * `gnss.path`: a device node under /dev only. provision.sh writes it into a systemd drop-in
 * (`DeviceAllow=`), so a newline or space in it would add directives to the unit;
 * the same pattern is checked there.
 */
const DEVICE_PATH = /^\/dev\/[A-Za-z0-9._/:-]+$/;

/** The keys that name where NMEA comes from; exactly one is set. */
const GNSS_SOURCE_KEYS = ['path', 'replayFile', 'gpsd'] as const;
const GNSS_SOURCE_HINT =
  "path: the receiver, e.g. /dev/ttyACM0; replayFile: an NMEA log to replay; gpsd: gpsd's address, e.g. 127.0.0.1:2947";

/** The `gnss` section: where NMEA comes from. Built with the schemas (schema.ts). */
export function gnssSectionSchema(z: Zod) {
  return z
    .strictObject({
      path: z
        .string()
        .regex(
          DEVICE_PATH,
          'must be a device path under /dev (letters, digits and . _ / : -), e.g. /dev/ttyACM0 or /dev/serial/by-id/usb-u-blox_GNSS-if00',
        )
        .refine((p) => !p.split('/').includes('..'), 'must not contain ".." (name the device itself, e.g. /dev/ttyACM0)')
        .optional()
        .describe('Serial device of the receiver, e.g. /dev/ttyACM0 (a path under /dev).'),
      baudRate: z
        .number()
        .int()
        .refine((b) => [4800, 9600, 19200, 38400, 57600, 115200, 230400, 460800, 921600].includes(b), {
          message: 'must be one of 4800, 9600, 19200, 38400, 57600, 115200, 230400, 460800, 921600',
        })
        .default(CONFIG_DEFAULTS.gnss.baudRate),
      replayFile: z
        .string()
        .min(1)
        .optional()
        .describe(
          'Replay an NMEA log instead of a serial port. Exactly one GNSS source (path, replayFile, gpsd) is set; two are an error.',
        ),
      gpsd: z
        .string()
        .refine(
          (a) => parseGpsdAddress(a) !== undefined,
          'must be host:port (127.0.0.1:2947, [::1]:2947), a host (port 2947) or an absolute Unix socket path',
        )
        .optional()
        .describe(
          "Read the receiver through gpsd at this address (e.g. 127.0.0.1:2947): gpsd shares it with chrony and its tools; the agent asks for the receiver's raw NMEA.",
        ),
      gpsdDevice: z
        .string()
        .regex(DEVICE_PATH, 'must be a device path under /dev, as gpsd lists it (e.g. /dev/ttyACM0)')
        .optional()
        .describe('With gnss.gpsd: watch only this receiver when gpsd serves several.'),
      replaySpeed: z
        .number()
        .min(0)
        .default(CONFIG_DEFAULTS.gnss.replaySpeed)
        .describe('Replay pace: 1 = as recorded, 10 = ten times faster, 0 = as fast as possible.'),
      maxLineLength: z
        .number()
        .int()
        .min(82)
        .max(65_536)
        .default(CONFIG_DEFAULTS.gnss.maxLineLength)
        .describe('Longest line kept; longer runs without a newline are dropped and counted.'),
    })
    .prefault({})
    .superRefine((g, ctx) => {
      // Exactly one source. Two would be ambiguous: a leftover replay file beside a receiver once
      // made the agent upload an old log instead of the vehicle's positions.
      const set = GNSS_SOURCE_KEYS.filter((k) => g[k] !== undefined);
      if (set.length === 0)
        ctx.addIssue({
          code: 'custom',
          path: ['path'],
          message: `set exactly one GNSS source: ${GNSS_SOURCE_KEYS.map((k) => `gnss.${k}`).join(', ')} (${GNSS_SOURCE_HINT})`,
        });
      else if (set.length > 1)
        for (const k of set.slice(1))
          ctx.addIssue({
            code: 'custom',
            path: [k],
            message: `gnss.${set[0]} and gnss.${k} are both set; set exactly one GNSS source (${GNSS_SOURCE_KEYS.map((s) => `gnss.${s}`).join(', ')}) and remove the other`,
          });
      if (g.gpsdDevice !== undefined && g.gpsd === undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['gpsdDevice'],
          message: 'gnss.gpsdDevice picks a receiver of gnss.gpsd; set gnss.gpsd too, or remove it',
        });
    });
}
