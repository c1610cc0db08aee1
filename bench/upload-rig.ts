/** Shared parts of the upload benchmarks: the simulator, the real token manager and requester, an outbox. */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent } from 'undici';
import { configSchemas, type RawConfig } from '../src/config/schema.js';
import { Secret } from '../src/config/secret.js';
import type { RecordedFix } from '../src/fix/fix.js';
import { silentLogger } from '../src/log.js';
import { AuthorizedClient } from '../src/platform/auth/authorized-client.js';
import { systemBootClock, type BootClock } from '../src/system/boot-clock.js';
import type { RegisteredDevice, RegistrationState } from '../src/platform/contracts.js';
import { PlatformHttp } from '../src/platform/transport/http.js';
import { TokenManager } from '../src/platform/auth/token-manager.js';
import type { TokenManagerTuning } from '../src/platform/auth/token-manager-options.js';
import { PlatformSimulator, type SimUrls } from '../src/sim/index.js';
import { openDatabase, type Database } from '../src/store/database.js';
import { MetaStore } from '../src/store/meta.js';
import { openStores } from '../src/store/stores.js';
import { Outbox } from '../src/store/outbox/outbox.js';
import { systemClock, type Clock } from '../src/system/clock.js';

export const IDENTITY = { externalSystemId: 'bench-fleet', externalDeviceId: 'bench-gw' };
export const DEVICE: RegisteredDevice = { ...IDENTITY, source: 'config', deviceUUID: '7f0c1d2e-3a4b-4c5d-8e6f-0a1b2c3d4e5f' };
export const registered: RegistrationState = { current: () => DEVICE, whenRegistered: async () => DEVICE };
export const T0 = Date.UTC(2026, 10, 22, 8, 0, 0);

/** A 10 Hz fix along a straight road. */
export function fixAt(i: number): RecordedFix {
  return {
    time: T0 + i * 100,
    mode: 3,
    lat: 52.1 + i * 1e-6,
    lon: 5.1 + i * 1.5e-6,
    altMSL: 4.2,
    speed: 13.9,
    track: 56.3,
    hdop: 0.7,
    satellitesUsed: 14,
  };
}

/** Temp dirs on the disk the data directory would be on (not tmpfs), so /proc/self/io sees writes. */
export function benchDir(): string {
  return mkdtempSync(path.join(os.tmpdir(), 'ta-bench-'));
}

export function openOutbox(
  dataDir: string,
  storage: Partial<RawConfig['storage']> = {},
  clock: Clock = systemClock,
): { db: Database; outbox: Outbox } {
  const db = openDatabase({ dataDir, logger: silentLogger() });
  const outbox = new Outbox({
    db,
    meta: new MetaStore(db),
    identity: IDENTITY,
    storage: { ...configSchemas().configSchema.shape.storage.parse({}), ...storage },
    dataDir,
    clock,
    logger: silentLogger(),
  });
  return { db, outbox };
}

export async function platform(
  dataDir: string,
  maxConnections = 16,
  external = false,
): Promise<{ sim: PlatformSimulator; urls: SimUrls; client: AuthorizedClient; tokens: TokenManager; close(): Promise<void> }> {
  const sim = new PlatformSimulator({ users: [{ username: 'agent', password: 'pw' }] });
  const ext = external ? await externalSimulator() : undefined;
  const urls = ext ? ext.urls : await sim.start();
  const dispatcher = new Agent({ connections: maxConnections, keepAliveTimeout: 4000 });
  const http = new PlatformHttp({ dispatcher, requestTimeoutMs: 30_000, maxResponseBytes: 1 << 20 });
  const db = openDatabase({ dataDir, logger: silentLogger() });
  const tokens = benchTokenManager(db, http, urls.authUrl, 60_000);
  const client = new AuthorizedClient({ http, tokens, logger: silentLogger() });
  return {
    sim,
    urls,
    client,
    tokens,
    async close() {
      await tokens.stop();
      db.close();
      await dispatcher.close();
      await sim.stop();
      await ext?.stop();
    },
  };
}

/**
 * The simulator in a process of its own (`telematics-agent sim`), so that the client side of the
 * drain has this process's core to itself, as it would on a gateway talking to a remote platform.
 */
export async function externalSimulator(): Promise<{ urls: SimUrls & { adminUrl: string }; stop(): Promise<void> }> {
  const main = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../cli/main.js');
  const child = spawn(process.execPath, [main, 'sim', '--json', '--user', 'agent', '--password', 'pw'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    let buf = '';
    child.stdout.on('data', (b: Buffer) => {
      buf += b.toString();
      const i = buf.indexOf('\n');
      if (i >= 0) resolve(buf.slice(0, i));
    });
    child.once('exit', (code) => reject(new Error(`simulator exited with ${code}`)));
  });
  const urls = JSON.parse(line) as SimUrls & { adminUrl: string };
  return {
    urls,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

/** write_bytes of /proc/self/io: bytes this process caused to be written to the storage layer. */
export function writeBytes(pid: number | 'self' = 'self'): number {
  const m = /write_bytes:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'));
  return m ? Number(m[1]) : Number.NaN;
}

export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]); // utime + stime (fields 14 and 15)
  return ticks / 100; // USER_HZ is 100 on Linux
}

export function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : Number.NaN;
}

export const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

/** The token manager every bench uses: the simulator's account, the schema's default tuning. */
export function benchTokenManager(
  db: Database,
  http: PlatformHttp,
  authUrl: string,
  maintainIntervalMs: number,
  /** Token ages and backoffs on these clocks (bench:wire runs them faster than real time); default the system's. */
  clocks?: { clock: Clock; bootClock: BootClock },
  /** The daemon's idle renewal (keepFreshS, idleRefreshAgeS); default none: always renewed ahead. */
  idle?: Pick<TokenManagerTuning, 'keepFreshS' | 'idleRefreshAgeS'>,
): TokenManager {
  return new TokenManager({
    records: openStores(db).tokens,
    http,
    authUrl,
    credentials: { username: 'agent', password: new Secret('pw') },
    clock: clocks?.clock ?? systemClock,
    bootClock: clocks?.bootClock ?? systemBootClock(),
    logger: silentLogger(),
    tuning: {
      refreshMarginS: 120,
      passwordRetryMinS: 60,
      passwordRetryMaxS: 3600,
      serviceRetryMinS: 2,
      serviceRetryMaxS: 300,
      lockWaitMs: 10_000,
      lockStaleMs: 60_000,
      maintainIntervalMs,
      ...idle,
    },
  });
}
