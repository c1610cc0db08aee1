import type { Config } from './config/load.js';
import type { NmeaSource } from './gnss/sources/source.js';
import type { Logger } from './log.js';
import type { GpiodTools } from './motion/gpiod-tools.js';
import type { BootClock } from './system/boot-clock.js';
import type { Clock } from './system/clock.js';
import type { IdentityProbes } from './system/identity.js';
import type { PlatformTuning } from './platform/tuning.js';
import type { UploadBackoff } from './upload/retry-decision.js';

/**
 * Waits that are constants in the daemon (UPLOAD_BACKOFF, PLATFORM_TUNING), not configuration:
 * tests, the demo and the benches shorten them here. Each part absent: the constant.
 */
export interface AgentTuning {
  upload?: Partial<UploadBackoff>;
  platform?: Partial<PlatformTuning>;
}

/** What the composition root (agent.ts) is built from. */
export interface AgentOptions {
  config: Config;
  logger: Logger;
  clock?: Clock;
  env?: NodeJS.ProcessEnv;
  /** Injected for tests; default the hardware probes. */
  probes?: IdentityProbes;
  bootClock?: BootClock;
  /** The receiver, injected by benches (bench:fleet drives a thousand agents from shared drives); default from gnss.path / gnss.replayFile. */
  source?: NmeaSource;
  /** How long in-flight uploads may finish at shutdown before they are abandoned (they stay queued). */
  shutdownGraceMs?: number;
  /**
   * The data directory's lock when the daemon started on a read-only card (system/daemon-locks.ts):
   * taken once the card is writable, before the database is reopened read-write. Absent (tests,
   * benches): nothing to take.
   */
  locks?: { takeDataDirLock(): boolean };
  /** How often a read-only data directory is checked for writes again (default 2 s). */
  readOnlyCheckMs?: number;
  /** ignition.gpio's tools, for tests without a GPIO chip; default Debian's gpiod on PATH. */
  gpiodTools?: GpiodTools;
  /** Shorter retry waits for tests, the demo and benches; default the constants. */
  tuning?: AgentTuning;
}
