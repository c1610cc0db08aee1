import type { Config } from '../config/load.js';
import type { Logger } from '../log.js';
import type { Clock } from '../system/clock.js';
import type { ClockFacts } from '../system/clock-offset.js';
import { systemProbes, type IdentityProbes } from '../system/identity.js';
import { AuthorizedClient } from './auth/authorized-client.js';
import { systemBootClock, type BootClock } from '../system/boot-clock.js';
import { DeviceRegistrar } from './device/registrar.js';
import { REGISTRATION_CONFIG_RETRY_S } from './device/registration-delay.js';
import { createPlatformDispatcher, PlatformDispatcher, type PlatformTransport } from './transport/dispatcher.js';
import { ticketKeyOf, TlsSessionStore, type SessionRecords } from './transport/tls-session-store.js';
import type { TokenRecords } from './auth/token-records.js';
import type { DeviceRecords } from './device/device-records.js';
import { PlatformHttp } from './transport/http.js';
import { PlatformContact, type ContactObserver } from './transport/platform-contact.js';
import { SecretRedactor } from './auth/secret-redactor.js';
import { StartSpread } from './device/start-spread.js';
import { TokenManager } from './auth/token-manager.js';
import { TOKEN_IDLE_REFRESH_AGE_S, TOKEN_KEEP_FRESH_S, TOKEN_REFRESH_MARGIN_S } from './auth/renewal-timing.js';
import { errorFields } from '../errors.js';
import { WireCounter } from './transport/wire-counter.js';
import { PLATFORM_TUNING, type PlatformTuning } from './tuning.js';

/** The records the platform side keeps in the database, opened once by the caller (store/stores.ts openStores). */
export interface PlatformRecords {
  tokens: TokenRecords;
  devices: DeviceRecords;
  /** The TLS session tickets. */
  meta: SessionRecords;
}

export interface PlatformDeps {
  config: Config;
  records: PlatformRecords;
  logger: Logger;
  clock: Clock;
  /** Default: the kernel's monotonic clock and boot id. */
  bootClock?: BootClock;
  /** Default: systeminformation, /proc/cpuinfo, /etc/machine-id. */
  probes?: IdentityProbes;
  /** Default: a new dispatcher from platform.caFile / maxConnections / requestTimeoutMs. */
  dispatcher?: PlatformTransport;
  /** Counts the platform sockets' bytes (status, persisted by the caller); default a fresh counter. */
  wire?: WireCounter;
  /** The daemon only: spread the first token request and upsert over platform.startupJitterS (start-spread.ts). */
  spreadStart?: boolean;
  /** The daemon only: system clock minus GNSS time (ms) from its live receiver, for TLS date errors. */
  clockOffsetMs?: () => number | undefined;
  /** Shorter waits for tests and benches (AgentOptions.tuning); default PLATFORM_TUNING. */
  tuning?: Partial<PlatformTuning>;
}

export interface PlatformParts {
  dispatcher: PlatformTransport;
  /** Bytes and protocol of the platform connections (not counted when a dispatcher was injected). */
  wire: WireCounter;
  http: PlatformHttp;
  /** When the platform last answered, and whether the newest exchange failed (status health). */
  contact: PlatformContact;
  tokens: TokenManager;
  /** AuthorizedRequester for the uploader and the location commands. */
  requester: AuthorizedClient;
  /** RegistrationState for the uploader. */
  registrar: DeviceRegistrar;
  /** Starts tokens, then registration (registration needs tokens). */
  start(): Promise<void>;
  /** Stops in reverse order and closes the dispatcher when this builder created it. */
  stop(): Promise<void>;
}

/** Builds the platform side from the frozen configuration: for src/agent.ts and the CLI commands. */
export function buildPlatform(deps: PlatformDeps): PlatformParts {
  const { config, records, logger, clock } = deps;
  const p = config.platform;
  const t = { ...PLATFORM_TUNING, ...deps.tuning };
  const ownDispatcher = deps.dispatcher === undefined;
  const wire = deps.wire ?? new WireCounter(clock);
  const dispatcher = deps.dispatcher ?? platformDispatcher(config, wire, logger.child({ component: 'platform' }), t.pingIntervalS);
  // One redactor for everything this agent hears from the platform; the token manager keeps it told
  // of the live secrets.
  const redactor = new SecretRedactor();
  const contact = new PlatformContact(clock);
  const clockFacts = (): ClockFacts => {
    const offsetMs = deps.clockOffsetMs?.();
    return { wallMs: clock.wallMs(), ...(offsetMs !== undefined ? { offsetMs } : {}) };
  };
  const http = platformHttp(config, dispatcher, redactor, contact, clockFacts);
  const startSpread =
    deps.spreadStart && p.startupJitterS > 0
      ? new StartSpread({ windowS: p.startupJitterS, clock, logger: logger.child({ component: 'platform' }) })
      : undefined;
  const tokens = new TokenManager({
    records: records.tokens,
    http,
    authUrl: p.authUrl,
    credentials: { username: config.credentials.username, password: config.credentials.password },
    clock,
    bootClock: deps.bootClock ?? systemBootClock(),
    logger: logger.child({ component: 'tokens' }),
    redactor,
    ...(startSpread ? { startSpread } : {}),
    tuning: {
      refreshMarginS: TOKEN_REFRESH_MARGIN_S,
      passwordRetryMinS: t.passwordRetryMinS,
      passwordRetryMaxS: t.passwordRetryMaxS,
      serviceRetryMinS: t.tokenServiceRetryMinS,
      serviceRetryMaxS: t.tokenServiceRetryMaxS,
      lockWaitMs: 2 * p.requestTimeoutMs + 5000,
      lockStaleMs: 4 * p.requestTimeoutMs + 10_000,
      maintainIntervalMs: 60_000,
      keepFreshS: TOKEN_KEEP_FRESH_S,
      idleRefreshAgeS: TOKEN_IDLE_REFRESH_AGE_S,
    },
  });
  const requester = new AuthorizedClient({ http, tokens, logger: logger.child({ component: 'platform' }) });
  const registrar = new DeviceRegistrar({
    records: records.devices,
    requester,
    deviceUrl: p.deviceUrl,
    device: config.device,
    probes: deps.probes ?? systemProbes,
    clock,
    logger: logger.child({ component: 'registration' }),
    ...(startSpread ? { startSpread } : {}),
    tuning: { retryMinS: t.registrationRetryMinS, retryMaxS: t.registrationRetryMaxS, configRetryS: REGISTRATION_CONFIG_RETRY_S },
  });
  const tickets = dispatcher instanceof PlatformDispatcher ? ticketStore(dispatcher, config, records.meta, clock) : undefined;
  let saveTimer: NodeJS.Timeout | undefined;
  const saveTickets = (): void => {
    try {
      tickets?.save();
    } catch (e) {
      // A full or damaged disk: the tickets are only an optimisation (the content is never logged).
      logger.debug({ err: errorFields(e) }, 'TLS session tickets not saved');
    }
  };
  return {
    dispatcher,
    wire,
    http,
    contact,
    tokens,
    requester,
    registrar,
    async start() {
      if (tickets) {
        try {
          const { loaded, discarded } = tickets.load();
          if (loaded > 0 || discarded) logger.info({ loaded, discarded }, 'TLS session tickets of the previous run');
        } catch (e) {
          logger.warn({ err: errorFields(e) }, 'TLS session tickets of the previous run not read');
        }
        saveTimer = setInterval(saveTickets, 60_000);
        saveTimer.unref();
      }
      await tokens.start();
      await registrar.start();
    },
    async stop() {
      clearInterval(saveTimer);
      saveTickets();
      for (const step of [() => registrar.stop(), () => tokens.stop(), async () => (ownDispatcher ? dispatcher.close() : undefined)]) {
        try {
          await step();
        } catch (e) {
          logger.warn({ err: errorFields(e) }, 'platform stop step failed');
        }
      }
    },
  };
}

/** Persists the dispatcher's TLS session tickets in the database (tls-session-store.ts), keyed to the configured origins. */
function ticketStore(dispatcher: PlatformDispatcher, config: Config, meta: SessionRecords, clock: Clock): TlsSessionStore {
  const p = config.platform;
  return new TlsSessionStore({
    meta,
    cache: dispatcher.sessions,
    trust: dispatcher.trust,
    keys: new Set([p.authUrl, p.deviceUrl, p.planningUrl].map(ticketKeyOf)),
    clock,
  });
}

/**
 * The platform dispatcher as the configuration says (platform.caFile, maxConnections,
 * requestTimeoutMs, http2, http2HeaderIndexing, idle timeout; pings as tuned): for buildPlatform and for `doctor`, which asks the
 * platform over the same kind of connection the daemon uses.
 */
export function platformDispatcher(
  config: Config,
  wire?: WireCounter,
  logger?: Logger,
  pingIntervalS = PLATFORM_TUNING.pingIntervalS,
): PlatformDispatcher {
  const p = config.platform;
  return createPlatformDispatcher({
    ...(p.caFile !== undefined ? { caFile: p.caFile } : {}),
    maxConnections: p.maxConnections,
    requestTimeoutMs: p.requestTimeoutMs,
    http2: p.http2,
    indexAuthorization: p.http2HeaderIndexing,
    idleTimeoutMs: platformIdleTimeoutS(config) * 1000,
    pingIntervalMs: pingIntervalS * 1000,
    ...(wire ? { wire } : {}),
    ...(logger ? { logger } : {}),
  });
}

/** PlatformHttp over `dispatcher` with the configured deadline and answer bound; `redactor` hides the secrets in answers. */
export function platformHttp(
  config: Config,
  dispatcher: PlatformTransport,
  redactor: SecretRedactor,
  /** The daemon's: whether the platform answers (status health). */
  contact?: ContactObserver,
  /** The system clock and its GNSS offset, for TLS date errors. */
  clockFacts?: () => ClockFacts,
): PlatformHttp {
  const p = config.platform;
  return new PlatformHttp({
    dispatcher,
    requestTimeoutMs: p.requestTimeoutMs,
    maxResponseBytes: p.maxResponseBytes,
    redactor,
    ...(contact ? { contact } : {}),
    ...(clockFacts ? { clockFacts } : {}),
  });
}

/**
 * platform.idleTimeoutS, by default the recording policy's longest gap between events while moving
 * plus a margin for the commit interval and a slow answer: a moving vehicle then keeps its
 * connection (and TLS session and HPACK table) from one event to the next.
 */
export function platformIdleTimeoutS(config: Config): number {
  return config.platform.idleTimeoutS ?? Math.ceil(config.recording.maxIntervalS) + 15;
}
