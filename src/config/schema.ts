import type { z } from 'zod';

import { platformSchema } from './platform-schema.js';
import { schemaParts } from './schema-parts.js';
import { motionSchemas } from './motion-schema.js';
import { loadZod, unloadZod, type Zod } from './zod.js';
import { gnssSectionSchema } from './gnss-schema.js';
import { SECRET_MASK } from './secret.js';
import { CONFIG_DEFAULTS } from './defaults.js';

/**
 * The configuration schema: every key, its type and what it means, in one place; each default is
 * taken from defaults.ts, where its reason is. docs/configuration.md is generated from its
 * describe() texts (`npm run docs:config`), and the README's two tables of keys are checked
 * against it by a test. Unknown keys are errors everywhere
 * (`strictObject`), so a typo never passes silently.
 *
 * Sections use `.prefault({})` so that an absent section still gets every inner default.
 */

function buildSchemas(z: Zod) {
  const { nonEmpty, urlPathId } = schemaParts(z);
  const { motionSchema, ignitionSchema } = motionSchemas(z, { nonEmpty });
  const platform = platformSchema(z);
  const gnssSchema = gnssSectionSchema(z);

  const credentialsSchema = z
    .strictObject({
      username: nonEmpty.describe('Platform user name (per environment).'),
      password: z
        .string()
        .min(1, 'must not be empty')
        // The mask config check prints: a printout saved as the configuration would log in with it.
        .refine((p) => p !== SECRET_MASK, {
          message: `is "${SECRET_MASK}", the mask config check prints in place of the password: put the real password here, or better in a file (mode 0600) named by credentials.passwordFile`,
        })
        .optional()
        .describe('Platform password. Prefer passwordFile, the TELEMATICS_AGENT_PASSWORD variable or a systemd credential.'),
      passwordFile: z
        .string()
        .min(1, 'must not be empty')
        .optional()
        .describe(
          'File holding the password (mode 0600: refused when group or others can read it); read again before every password grant, so a corrected file needs no restart.',
        ),
    })
    .refine((c) => c.password === undefined || c.passwordFile === undefined, {
      path: ['password'],
      message: 'set either credentials.password or credentials.passwordFile, not both',
      // Also when another credentials key is wrong, so that one run reports every problem.
      when: (payload) => {
        const v = payload.value as { password?: unknown; passwordFile?: unknown } | undefined;
        return typeof v === 'object' && v !== null && v.password !== undefined && v.passwordFile !== undefined;
      },
    })
    .describe(
      'Platform credentials. Exactly one of password and passwordFile, unless TELEMATICS_AGENT_PASSWORD or $CREDENTIALS_DIRECTORY/password supplies it.',
    );

  const deviceSchema = z.strictObject({
    externalSystemId: urlPathId.describe('Identifier of the source system (shipper or carrier).'),
    externalDeviceId: urlPathId
      .optional()
      .describe(
        'This device in the source system. Default: the system or Raspberry Pi CPU serial, else /etc/machine-id; chosen once and kept in the database.',
      ),
    carrierCode: nonEmpty.describe('Carrier code the platform matches the device with.'),
    customerDeviceId: nonEmpty.optional().describe('Default: externalDeviceId.'),
    licensePlate: urlPathId.optional().describe('Licence plate of the vehicle; also sent inline with each position.'),
    driverName: nonEmpty.optional(),
    attributes: z.record(z.string(), z.unknown()).optional().describe('Free-form attributes sent with registration.'),
    active: z.boolean().default(CONFIG_DEFAULTS.device.active),
  });

  const qualitySchema = z
    .strictObject({
      minMode: z
        .union([z.literal(2), z.literal(3)])
        .default(CONFIG_DEFAULTS.quality.minMode)
        .describe('Lowest fix mode accepted (2 = 2D, 3 = 3D).'),
      maxHdop: z.number().positive().default(CONFIG_DEFAULTS.quality.maxHdop).describe('Fixes with a larger HDOP are rejected.'),
      maxSpeedKmh: z
        .number()
        .positive()
        .default(CONFIG_DEFAULTS.quality.maxSpeedKmh)
        .describe('A jump between fixes implying more than this speed is rejected.'),
      minDateMarginDays: z
        .number()
        .int()
        .min(0)
        .default(CONFIG_DEFAULTS.quality.minDateMarginDays)
        .describe('Dates more than this before the release date are corrected for the GPS week rollover or rejected.'),
    })
    .prefault({});

  const recordingSchema = z
    .strictObject({
      mode: z
        .enum(['path', 'adaptive', 'all'])
        .default(CONFIG_DEFAULTS.recording.mode)
        .describe(
          '"path" records where the path bends (the delivered track stays within pathToleranceM) and several positions at every stop; "adaptive" records like a classic hardware tracker (time, distance, heading, speed triggers; about five times the events); "all" records every fix that passes the gate.',
        ),
      pathToleranceM: z
        .number()
        .min(1)
        .max(1000)
        .default(CONFIG_DEFAULTS.recording.pathToleranceM)
        .describe("path: largest deviation of the delivered track (interpolated in time) from the receiver's while moving."),
      maxIntervalS: z
        .number()
        .positive()
        .max(3600)
        .default(CONFIG_DEFAULTS.recording.maxIntervalS)
        .describe('path and adaptive: while moving, record at least this often.'),
      maxDelayS: z
        .number()
        .min(0)
        .max(50)
        .default(CONFIG_DEFAULTS.recording.maxDelayS)
        .describe(
          'path: 0 decides each position as it comes; more waits this many seconds of the path, once a position is needed, and then chooses the fewest straight lines that keep the track (20: 10-13 % fewer events in town, bench:policy). No position waits longer than maxIntervalS, and the live position is never older; what waits is lost at a power cut as the window of 0 is.',
        ),
      pathMaxDeviationM: z
        .number()
        .min(1)
        .max(1000)
        .default(CONFIG_DEFAULTS.recording.pathMaxDeviationM)
        .describe(
          'path with maxDelayS: no moving epoch further than this from the delivered track; up to 4 % of the moving time may lie between pathToleranceM and this, so the 95th percentile stays within pathToleranceM.',
        ),
      minDistanceM: z
        .number()
        .positive()
        .default(CONFIG_DEFAULTS.recording.minDistanceM)
        .describe('adaptive: while moving, record after this distance.'),
      minHeadingChangeDeg: z
        .number()
        .positive()
        .max(180)
        .default(CONFIG_DEFAULTS.recording.minHeadingChangeDeg)
        .describe('adaptive: while moving, record after this change of heading.'),
      minSpeedChangeKmh: z
        .number()
        .positive()
        .default(CONFIG_DEFAULTS.recording.minSpeedChangeKmh)
        .describe('adaptive: while moving, record after this change of speed.'),
      minIntervalS: z.number().min(0).default(CONFIG_DEFAULTS.recording.minIntervalS).describe('Never record more often than this.'),
      stoppedSpeedKmh: z
        .number()
        .min(0)
        .default(CONFIG_DEFAULTS.recording.stoppedSpeedKmh)
        .describe('Below this speed the vehicle counts as stopped.'),
      movingSpeedKmh: z
        .number()
        .min(0)
        .default(CONFIG_DEFAULTS.recording.movingSpeedKmh)
        .describe('Above this speed a stopped vehicle counts as moving again (hysteresis).'),
      stopRepeatS: z
        .number()
        .positive()
        .default(CONFIG_DEFAULTS.recording.stopRepeatS)
        .describe(
          'path: one more position this long into a stop, for stops that last (deliveries); every stop already has two, arrival and the last still fix on moving off.',
        ),
      stoppedHeartbeatS: z
        .number()
        .positive()
        .default(CONFIG_DEFAULTS.recording.stoppedHeartbeatS)
        .describe(
          'While stopped: one heartbeat fix this often (3600 s: a stop up to an hour, such as a long delivery, is confirmed once an hour).',
        ),
      parkedHeartbeatS: z
        .number()
        .positive()
        .max(86_400)
        .default(CONFIG_DEFAULTS.recording.parkedHeartbeatS)
        .describe(
          'Parked (stopped for longer than stoppedHeartbeatS): one heartbeat fix this often after the first. A parked vehicle does not move (moving off is recorded at once), and every wake-up after the hour-long access token lapsed costs a refresh too: 3600 s is 16.6 KB a parked hour on real terms (cold connections, a public certificate chain, no TLS resumption), 10800 s 5.5 KB (bench:wire). A value below stoppedHeartbeatS means stoppedHeartbeatS.',
        ),
    })
    .prefault({})
    .superRefine((r, ctx) => {
      if (r.movingSpeedKmh < r.stoppedSpeedKmh)
        ctx.addIssue({
          code: 'custom',
          path: ['movingSpeedKmh'],
          message: `must be at least recording.stoppedSpeedKmh (${r.stoppedSpeedKmh}) so that stopped/moving has hysteresis`,
        });
    });

  const storageSchema = z
    .strictObject({
      maxFixes: z
        .number()
        .int()
        .min(1000)
        .default(CONFIG_DEFAULTS.storage.maxFixes)
        .describe('Most fixes kept in the outbox; beyond it the oldest backlog is thinned.'),
      minFreeBytes: z
        .number()
        .int()
        .min(0)
        .default(CONFIG_DEFAULTS.storage.minFreeBytes)
        .describe(
          'Free-disk floor for the data directory; below it the outbox grows by at most a quarter of the space left, then thins its backlog.',
        ),
      commitIntervalMs: z
        .number()
        .int()
        .min(50)
        .max(60_000)
        .default(CONFIG_DEFAULTS.storage.commitIntervalMs)
        .describe('Recorded fixes are committed at least this often (a power cut loses at most this much).'),
      commitMaxFixes: z
        .number()
        .int()
        .min(1)
        .max(10_000)
        .default(CONFIG_DEFAULTS.storage.commitMaxFixes)
        .describe('... or as soon as this many are waiting.'),
      ballastBytes: z
        .number()
        .int()
        .min(0)
        .max(256 * 1024 * 1024)
        .default(CONFIG_DEFAULTS.storage.ballastBytes)
        .describe('Size of the reserve file dataDir/ballast, deleted on a full disk so the database stays writable; 0 = none.'),
    })
    .prefault({});

  const uploadSchema = z
    .strictObject({
      order: z
        .enum(['live-first', 'oldest-first'])
        .default(CONFIG_DEFAULTS.upload.order)
        .describe('"live-first": the newest fix at once, the backlog oldest-first behind it; "oldest-first": strictly in order.'),
      concurrency: z
        .number()
        .int()
        .min(1)
        .max(64)
        .default(CONFIG_DEFAULTS.upload.concurrency)
        .describe(
          'Event requests in flight at most, both lanes. The backlog grows its share (all but one, kept for the live lane) while the platform answers near its base latency, and yields on pushback; HTTP/2 carries them as streams of one connection, HTTP/1.1 on at most platform.maxConnections.',
        ),
      minBackoffMs: z
        .number()
        .optional()
        .describe('No longer read: the first retry waits 1 s (UPLOAD_BACKOFF, doubling to 5 min). Still accepted, with a warning.'),
      maxBackoffMs: z
        .number()
        .optional()
        .describe('No longer read: retries double up to 5 min (UPLOAD_BACKOFF). Still accepted, with a warning.'),
      latencyTargetMs: z
        .number()
        .int()
        .min(5)
        .max(10_000)
        .default(CONFIG_DEFAULTS.upload.latencyTargetMs)
        .describe(
          'Backlog lane: the rise of request latency above its base (the least seen over 10 minutes) at which the backlog yields (the platform queue is growing); below it the backlog takes more requests in flight, above it halves them.',
        ),
      backlogMaxRatePerS: z
        .number()
        .min(0)
        .max(1000)
        .optional()
        .describe(
          'Backlog events per second at most, a ceiling over the adaptive drain. Default none (0): the drain adapts to the platform.',
        ),
      backlogRatePerS: z
        .number()
        .min(0)
        .max(1000)
        .optional()
        .describe('Replaced by upload.backlogMaxRatePerS (the drain adapts; this is now a ceiling over it). Still read, with a warning.'),
      eventDetail: z
        .enum(['position', 'full'])
        .default(CONFIG_DEFAULTS.upload.eventDetail)
        .describe(
          '"position": each event carries what the platform needs to place it (id, GNSS time, position, speed, heading, the licence plate or else the device identity); "full" adds both identities, deviceUUID, altitude, HDOP and satellites used.',
        ),
    })
    .prefault({});

  const logSchema = z
    .strictObject({
      level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default(CONFIG_DEFAULTS.log.level),
    })
    .prefault({});

  const statusSchema = z
    .strictObject({
      socketPath: z
        .string()
        .min(1)
        .optional()
        .describe(
          'Unix socket of the running daemon for status (mode 0660: root, the service user and its group). Default: /run/telematics-agent/status.sock when a socket is there or the directory is writable ($TELEMATICS_AGENT_RUN_DIR moves it), else <dataDir>/status.sock.',
        ),
    })
    .prefault({});

  const configSchema = z.strictObject({
    environment: z
      .enum(['production', 'staging'])
      .default(CONFIG_DEFAULTS.environment)
      .describe(
        'Selects the default platform addresses: production or staging. Staging derives each address not set explicitly: first host label + -stg.',
      ),
    platform,
    credentials: credentialsSchema,
    device: deviceSchema,
    gnss: gnssSchema,
    quality: qualitySchema,
    recording: recordingSchema,
    storage: storageSchema,
    upload: uploadSchema,
    motion: motionSchema,
    ignition: ignitionSchema,
    dataDir: z
      .string()
      .min(1)
      .default(CONFIG_DEFAULTS.dataDir)
      .describe(
        "Holds agent.db and agent.lock (directory 0700, files 0600). Files a command run as root creates there (register, device, location) are given to the directory's owner, so the service can open them. agent.db also keeps the TLS session tickets, so that the first connections after a restart resume; they are dropped when the trusted roots or the platform addresses change, and 7 days after the server sent them.",
      ),
    log: logSchema,
    status: statusSchema,
  });

  return {
    configSchema,
    platformSchema: platform,
    motionSchema,
    ignitionSchema,
    credentialsSchema,
    deviceSchema,
    gnssSchema,
    qualitySchema,
    recordingSchema,
    storageSchema,
    uploadSchema,
    logSchema,
    statusSchema,
  };
}

/** Every section's schema, and the whole file's (`configSchema`). */
export type ConfigSchemas = ReturnType<typeof buildSchemas>;

/** The file as parsed by the schema, before addresses and the password are resolved. */
export type RawConfig = z.infer<ConfigSchemas['configSchema']>;

let built: ConfigSchemas | undefined;
let defaults: SchemaDefaults | undefined;

/** The schemas, built at first use (zod is loaded then: zod.ts). */
export function configSchemas(): ConfigSchemas {
  return (built ??= buildSchemas(loadZod()));
}

/** The schema's defaults that modules outside the configuration use, as plain data. */
export interface SchemaDefaults {
  readonly quality: Readonly<RawConfig['quality']>;
  readonly recording: Readonly<RawConfig['recording']>;
  readonly dataDir: string;
}

/** Frozen: every gate and policy built without options shares them. */
export function schemaDefaults(): SchemaDefaults {
  if (defaults) return defaults;
  const s = configSchemas();
  return (defaults = Object.freeze({
    quality: Object.freeze(s.qualitySchema.parse({})),
    recording: Object.freeze(s.recordingSchema.parse({})),
    dataDir: s.configSchema.shape.dataDir.parse(undefined),
  }));
}

/**
 * Lets the schemas and zod go once the configuration is read (the daemon: about 3 MB of its heap,
 * 4 MB of RSS; docs/decisions/daemon-memory.md). The defaults stay, as plain data; a later
 * `configSchemas()` loads zod again. A process that has loaded the location upload's schemas
 * (sites/location-schema.ts, a CLI command; never the daemon) keeps zod through them.
 */
export function releaseConfigSchemas(): void {
  schemaDefaults();
  built = undefined;
  unloadZod();
}
