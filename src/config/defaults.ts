/**
 * Every configuration default, with the reason for its value: the one place to read or change one.
 * The schemas' `.default()` (schema.ts and its sections) take their values from here, and so do the
 * modules that need a default without a configuration (the trips' MOVEMENT_DEFAULTS, the line
 * splitter, the week rollover); a test holds the schemas and this table to the same keys and values.
 * Plain data without zod, so that reading a default loads no schema. What each key means, for the
 * installer, stays in the schemas' describe() texts (docs/configuration.md is made from them).
 * "Not measured" marks a value chosen by reasoning alone, open to a measurement.
 *
 * Defaults worked out at run time are not here but beside the code that works them out:
 * platform.authUrl and planningUrl (addresses.ts, by environment), platform.idleTimeoutS
 * (recording.maxIntervalS + 15, platform/build.ts), device.externalDeviceId (the hardware serial,
 * system/identity.ts), device.customerDeviceId (externalDeviceId) and status.socketPath
 * (socket/path.ts).
 */

type DeepReadonly<T> = { readonly [K in keyof T]: T[K] extends object ? DeepReadonly<T[K]> : T[K] };

/**
 * Frozen all the way down, so that no module changes a default for the others. Numbers stay
 * `number` (not `as const`): a default of 4096 must not make a parameter's type the literal 4096.
 */
function frozen<T extends object>(o: T): DeepReadonly<T> {
  for (const v of Object.values(o)) if (typeof v === 'object' && v !== null) frozen(v as object);
  return Object.freeze(o) as DeepReadonly<T>;
}

export const CONFIG_DEFAULTS = frozen({
  /** The fleet's real account; staging is asked for by name. */
  environment: 'production' as const,
  /** Debian's place for a service's state (FHS /var/lib). */
  dataDir: '/var/lib/telematics-agent',
  platform: {
    /** The platform's OTM5 v5 event intake (docs/platform-contract.md). */
    eventsPath: '/otm/api/v5/events',
    /** The OTM5 v5 location upload beside it (docs/platform-contract.md, Sites). */
    locationsPath: '/otm/api/v5/locations',
    /** One request's deadline over a cellular link; a slower link (satellite, congested cell) sets more. Not measured. */
    requestTimeoutMs: 30_000,
    /** Above the platform's documented answers, small beside the daemon's memory. Not measured. */
    maxResponseBytes: 1024 * 1024,
    /** HTTP/1.1 only: the connections the uploader may hold open per host. Not measured. */
    maxConnections: 8,
    /** One multiplexed connection per host carries the drain's requests as streams. */
    http2: true,
    /** The bearer crosses once per connection: 891 instead of 1,947 B per event (bench:wire). */
    http2HeaderIndexing: true,
    /** 1,000 vehicles powered on together spread their first requests enough at 30 s (bench:fleet). */
    startupJitterS: 30,
  },
  device: {
    /** A registered device is one that sends. */
    active: true,
  },
  gnss: {
    /** u-blox's factory rate on its UART (a USB receiver ignores it). */
    baudRate: 9600,
    /** A replayed log runs at the pace it was recorded. */
    replaySpeed: 1,
    /** Far above NMEA's 82 characters (proprietary sentences run long), and a bound on a binary stream's memory. */
    maxLineLength: 4096,
  },
  quality: {
    /** A 2D fix still places a vehicle; 3D would drop fixes under a poor sky. Not measured. */
    minMode: 2 as const,
    /** Loose on purpose: only hopeless geometry is rejected. Not measured. */
    maxHdop: 20,
    /** No road vehicle goes faster: a jump implying more is a bad fix. */
    maxSpeedKmh: 300,
    /** A year before the release date: older dates are a receiver past its week rollover. */
    minDateMarginDays: 365,
  },
  recording: {
    /** Records where the path bends: the track kept for a fifth of adaptive's events (docs/decisions/recording-policy.md). */
    mode: 'path' as const,
    /** Within 10 m of the receiver's track at every moving epoch, about 160 events an hour in town (bench:policy). */
    pathToleranceM: 10,
    /** The live position at most a minute old while moving; also a straight road's only cost. */
    maxIntervalS: 60,
    /** 10-13 % fewer events in town with every path goal kept; a corner reaches the live lane up to ~20-41 s later (bench:policy). */
    maxDelayS: 20,
    /** With maxDelayS: under the 25 m goal for any epoch (docs/decisions/late-path-policy.md). */
    pathMaxDeviationM: 20,
    /** adaptive: a classic tracker's distance trigger. */
    minDistanceM: 100,
    /** adaptive: a classic tracker's heading trigger. */
    minHeadingChangeDeg: 10,
    /** adaptive: a classic tracker's speed trigger. */
    minSpeedChangeKmh: 10,
    /** One record a second at most: a 10 Hz receiver's epochs are not each an event. */
    minIntervalS: 1,
    /** Below a walking pace a vehicle stands; the trips' still speed is the same (motion/agent-motion.ts). */
    stoppedSpeedKmh: 3,
    /** Twice the stopped speed: a vehicle creeping at the threshold does not flap. */
    movingSpeedKmh: 6,
    /** A third position for stops that last (deliveries); at 20 s it cost one at most red lights. */
    stopRepeatS: 120,
    /** A stop up to an hour (a long delivery) is confirmed once an hour. */
    stoppedHeartbeatS: 3600,
    /** Parked: each wake-up also renews the token (16.5 KB on real terms), so a third as many make a parked hour 5.5 KB (bench:wire). */
    parkedHeartbeatS: 10_800,
  },
  storage: {
    /** Bounds the card's space; past it the oldest backlog is thinned (docs/decisions/outbox-and-thinning.md). Not measured. */
    maxFixes: 2_000_000,
    /** The system's reserve on the card for journald and updates (docs/decisions/outbox-and-thinning.md). */
    minFreeBytes: 200 * 1024 * 1024,
    /** A power cut loses at most a second of fixes, for one commit a second of flash writes. */
    commitIntervalMs: 1000,
    /** ... or sooner when a burst waits: a commit stays small. */
    commitMaxFixes: 100,
    /** Room for the WAL and the token pair on a full disk (docs/reliability.md). */
    ballastBytes: 4 * 1024 * 1024,
  },
  upload: {
    /** The live position first, so the platform's view is current during a drain. */
    order: 'live-first' as const,
    /** Requests in flight at most, both lanes (bench:drain, 300 ms RTT; docs/benchmarks.md, "Draining a backlog"). */
    concurrency: 32,
    /** RFC 6817 (LEDBAT) caps its target at 100 ms; bench:drain measured the drains and the live lane's delay with it. */
    latencyTargetMs: 100,
    /** What the platform needs to place an event; "full" costs bytes on each (docs/decisions/event-body-and-data-cost.md). */
    eventDetail: 'position' as const,
  },
  motion: {
    /** Movement and engine events on; false only for a platform that refuses them. */
    enabled: true,
    /** A red light (30-40 s, rarely over 50) is not the end of a trip (docs/trips.md). */
    stopAfterS: 60,
    /** Queue creeping and a standing receiver's jitter stay inside it (docs/trips.md). */
    departRadiusM: 50,
  },
  ignition: {
    /** A value file costs microseconds to read; a change is dated within 200 ms (docs/trips.md). */
    pollMs: 200,
    /** A cranking dip (under 1 s) is no engine stop (docs/trips.md). */
    debounceS: 2,
    gpio: {
      /** The first chip, where a Raspberry Pi's header pins are on most models. */
      chip: 'gpiochip0',
      /** A line that reads 1 with the ignition on, as a plain input wires it. */
      activeLow: false,
    },
  },
  log: {
    /** One line per change of state for journald; debug and trace are for a technician. */
    level: 'info' as const,
  },
});
