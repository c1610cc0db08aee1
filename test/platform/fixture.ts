import { onTestFinished } from 'vitest';
import { Agent } from 'undici';
import { createPlatformDispatcher, type PlatformDispatcher } from '../../src/platform/transport/dispatcher.js';
import { makeThrowawayCa } from '../../src/sim/throwaway-ca.js';
import { Secret } from '../../src/config/secret.js';
import { silentLogger, type Logger } from '../../src/log.js';
import { bootClockFrom, type BootClock } from '../../src/system/boot-clock.js';
import { PlatformHttp } from '../../src/platform/transport/http.js';
import type { SecretRedactor } from '../../src/platform/auth/secret-redactor.js';
import type { StartSpread } from '../../src/platform/device/start-spread.js';
import { AuthorizedClient } from '../../src/platform/auth/authorized-client.js';
import { TokenManager } from '../../src/platform/auth/token-manager.js';
import type { TokenManagerTuning } from '../../src/platform/auth/token-manager-options.js';
import { PlatformSimulator, type PlatformSimulatorOptions, type SimUrls } from '../../src/sim/index.js';
import { openDatabase, type Database } from '../../src/store/database.js';
import { openStores } from '../../src/store/stores.js';
import { ManualClock } from '../../src/system/clock.js';
import { tempDir } from '../helpers/tmp.js';

/** Fast tuning for tests: time moves by ManualClock.advance, never by waiting. */
export const TEST_TUNING: TokenManagerTuning = {
  refreshMarginS: 120,
  passwordRetryMinS: 60,
  passwordRetryMaxS: 3600,
  serviceRetryMinS: 2,
  serviceRetryMaxS: 300,
  lockWaitMs: 10_000,
  lockStaleMs: 60_000,
  maintainIntervalMs: 60_000,
};

export interface Platform {
  sim: PlatformSimulator;
  urls: SimUrls;
  clock: ManualClock;
  boot: BootClock;
  dataDir: string;
  dispatcher: Agent | PlatformDispatcher;
  http: PlatformHttp;
  /** A new connection to the test's database (as a second process would open it). */
  openDb(): Database;
  /** A token manager + requester on a connection of its own. */
  agent(options?: {
    db?: Database;
    password?: string | Secret;
    boot?: BootClock;
    logger?: Logger;
    random?: () => number;
    /** Another HTTP client (one with a redactor); default the shared one. */
    http?: PlatformHttp;
    redactor?: SecretRedactor;
    /** The daemon's start-up spread (platform.startupJitterS). */
    startSpread?: StartSpread;
    /** Over TEST_TUNING (the daemon's idle renewal: keepFreshS, idleRefreshAgeS). */
    tuning?: Partial<TokenManagerTuning>;
  }): {
    tokens: TokenManager;
    client: AuthorizedClient;
    db: Database;
  };
}

/**
 * `tls`: the simulator behind TLS (h2 offers HTTP/2 and HTTP/1.1, http/1.1 only the latter) with a
 * throwaway CA, and the agent's own dispatcher trusting it through platform.caFile.
 */
export async function startPlatform(
  simOptions: PlatformSimulatorOptions = {},
  transport: { tls?: 'h2' | 'http/1.1'; idleTimeoutMs?: number } = {},
): Promise<Platform> {
  // Wall time starts now, not ManualClock's fixed date: the token lock row records wall time, and a
  // child process on the system clock took a lock stamped days ago as stale and refreshed beside us.
  const clock = new ManualClock({ wallMs: Date.now() });
  const sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'pw' }], clock, ...simOptions });
  const dataDir = tempDir();
  let dispatcher: Agent | PlatformDispatcher;
  let urls: SimUrls;
  if (transport.tls) {
    const ca = makeThrowawayCa(tempDir('ta-ca-'));
    urls = await sim.start({ tls: { key: ca.key, cert: ca.cert, protocols: transport.tls }, idleTimeoutMs: 60_000 });
    dispatcher = createPlatformDispatcher({
      caFile: ca.caFile,
      maxConnections: 8,
      requestTimeoutMs: 5000,
      idleTimeoutMs: transport.idleTimeoutMs ?? 45_000,
    });
  } else {
    urls = await sim.start();
    dispatcher = new Agent({ connections: 32 });
  }
  const http = new PlatformHttp({ dispatcher, requestTimeoutMs: 5000, maxResponseBytes: 1024 * 1024 });
  const boot = bootClockFrom(clock);
  const dbs: Database[] = [];
  const managers: TokenManager[] = [];
  const openDb = (): Database => {
    const db = openDatabase({ dataDir, logger: silentLogger() });
    dbs.push(db);
    return db;
  };
  // onTestFinished, not afterEach: vitest never runs an afterEach registered while a test runs.
  onTestFinished(async () => {
    for (const m of managers) await m.stop();
    for (const db of dbs) if (db.open) db.close();
    await sim.stop();
    await dispatcher.close();
  });
  return {
    sim,
    urls,
    clock,
    boot,
    dataDir,
    dispatcher,
    http,
    openDb,
    agent(o = {}) {
      const db = o.db ?? openDb();
      const password = o.password instanceof Secret ? o.password : new Secret(o.password ?? 'pw');
      const tokens = new TokenManager({
        records: openStores(db).tokens,
        http: o.http ?? http,
        authUrl: urls.authUrl,
        credentials: { username: 'agent', password },
        ...(o.redactor ? { redactor: o.redactor } : {}),
        ...(o.startSpread ? { startSpread: o.startSpread } : {}),
        clock,
        bootClock: o.boot ?? boot,
        logger: o.logger ?? silentLogger(),
        tuning: { ...TEST_TUNING, ...o.tuning },
        random: o.random ?? (() => 0.5),
      });
      managers.push(tokens);
      const client = new AuthorizedClient({ http: o.http ?? http, tokens, logger: silentLogger() });
      return { tokens, client, db };
    },
  };
}
