import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { Agent } from '../../src/agent.js';
import { PLATFORM_TUNING, type PlatformTuning } from '../../src/platform/tuning.js';
import { UPLOAD_BACKOFF, type UploadBackoff } from '../../src/upload/retry-decision.js';
import { parseConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/log.js';
import type { SimUrls } from '../../src/sim/index.js';
import type { IdentityProbes } from '../../src/system/identity.js';
import type { DriveVariant } from './drives.js';
import { FleetReceiver, FleetTicker } from './receiver.js';
import { FLEET_USER } from './sim-core.js';

/**
 * How the fleet's timers are scaled: everything that waits in the agent (token lifetimes through the
 * simulator, and with them the refresh margin, at most a tenth of a lifetime; the retry bounds, the
 * backlog pace, the start-up spread, the commit interval) is divided by `speed` together with the
 * replay, so that one real second is `speed` simulated ones. The retry bounds are the daemon's
 * constants, scaled through AgentOptions.tuning. The request deadline is not scaled: network and
 * CPU latency are not accelerated, and a deadline divided by the speed-up turns a busy moment into timeouts.
 */
export interface FleetScaling {
  speed: number;
  /** upload.backlogMaxRatePerS of the agent, per simulated second (the fleet sets speed x this); 0: none. */
  backlogMaxRatePerS: number;
  /** platform.startupJitterS, simulated seconds. */
  startupJitterS: number;
}

export function scaledConfig(s: FleetScaling): {
  platform: Record<string, number>;
  upload: Record<string, number>;
  storage: Record<string, number>;
  /** AgentOptions.tuning: the daemon's retry bounds, scaled. */
  tuning: { upload: UploadBackoff; platform: PlatformTuning };
} {
  const p = PLATFORM_TUNING;
  return {
    platform: {
      startupJitterS: s.startupJitterS / s.speed,
      // HTTP/1.1 on loopback: one connection per agent is plenty.
      maxConnections: 2,
    },
    upload: s.backlogMaxRatePerS > 0 ? { backlogMaxRatePerS: s.backlogMaxRatePerS * s.speed } : {},
    // No 4 MiB ballast file per agent: a thousand of them would be 4 GB of writes for nothing measured here.
    storage: { commitIntervalMs: Math.max(50, Math.round(1000 / s.speed)), ballastBytes: 0 },
    tuning: {
      upload: { minBackoffMs: UPLOAD_BACKOFF.minBackoffMs / s.speed, maxBackoffMs: UPLOAD_BACKOFF.maxBackoffMs / s.speed },
      platform: {
        passwordRetryMinS: p.passwordRetryMinS / s.speed,
        passwordRetryMaxS: p.passwordRetryMaxS / s.speed,
        tokenServiceRetryMinS: p.tokenServiceRetryMinS / s.speed,
        tokenServiceRetryMaxS: p.tokenServiceRetryMaxS / s.speed,
        registrationRetryMinS: p.registrationRetryMinS / s.speed,
        registrationRetryMaxS: p.registrationRetryMaxS / s.speed,
        pingIntervalS: p.pingIntervalS / s.speed,
      },
    },
  };
}

export interface FleetOptions {
  n: number;
  dir: string;
  urls: Pick<SimUrls, 'authUrl' | 'deviceUrl' | 'planningUrl'>;
  variants: DriveVariant[];
  scaling: FleetScaling;
  random?: () => number;
}

export interface Vehicle {
  index: number;
  plate: string;
  agent: Agent;
  receiver: FleetReceiver;
  started: boolean;
}

/** A failed event upload the agent logged, with the backoff it chose. */
export interface RetryNote {
  vehicle: number;
  atMs: number;
  delayMs: number;
  failures: number;
}

/** N real Agents in this process, each with its own data directory, hardware serial, configuration and receiver. */
export class Fleet {
  readonly vehicles: Vehicle[] = [];
  readonly ticker: FleetTicker;
  readonly retries: RetryNote[] = [];
  /** Log lines at warn and above, by message (a thousand agents say the same things). */
  readonly messages = new Map<string, number>();
  #errorLines: string[] = [];

  constructor(o: FleetOptions) {
    const s = o.scaling;
    this.ticker = new FleetTicker(1000 / s.speed);
    const scaled = scaledConfig(s);
    const destination = new Writable({
      write: (chunk: Buffer, _enc, done) => {
        for (const line of chunk.toString().split('\n')) if (line) this.#onLog(line);
        done();
      },
    });
    const logger = createLogger({ destination, level: 'warn' });
    const random = o.random ?? Math.random;
    for (let i = 0; i < o.n; i++) {
      const dir = path.join(o.dir, `v${String(i).padStart(4, '0')}`);
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const plate = `FL-${String(i).padStart(4, '0')}`;
      const config = parseConfig(
        {
          environment: 'staging',
          platform: { authUrl: o.urls.authUrl, deviceUrl: o.urls.deviceUrl, planningUrl: o.urls.planningUrl, ...scaled.platform },
          credentials: { username: FLEET_USER.username, password: FLEET_USER.password },
          device: { externalSystemId: 'fleet-bench', carrierCode: 'SIM', licensePlate: plate },
          gnss: { replayFile: `fleet-drive-${i}` },
          upload: scaled.upload,
          storage: scaled.storage,
          dataDir: path.join(dir, 'data'),
          log: { level: 'warn' },
          status: { socketPath: path.join(dir, 's.sock') },
        },
        { source: `fleet vehicle ${i}`, env: {} },
      );
      const variant = o.variants[i % o.variants.length]!;
      // Each vehicle somewhere else on its route: its own start offset into the first half hour of the
      // drive, which is long enough for the whole scenario (GNSS time never runs backwards).
      const receiver = new FleetReceiver(variant, Math.floor(random() * Math.min(1800, variant.epochs.length / 2)), plate);
      this.ticker.add(receiver);
      const serial = `FLEET${String(i).padStart(6, '0')}`;
      const probes: IdentityProbes = {
        system: async () => ({ serial, model: 'fleet-bench' }),
        cpuSerial: async () => undefined,
        machineId: async () => undefined,
      };
      const agent = new Agent({
        config,
        logger: logger.child({ vehicle: i }),
        env: {},
        probes,
        source: receiver,
        shutdownGraceMs: 500,
        tuning: scaled.tuning,
      });
      this.vehicles.push({ index: i, plate, agent, receiver, started: false });
    }
  }

  /** Starts every agent at its own moment of `windowMs` (a staggered morning start); resolves when all run. */
  async start(windowMs: number, random: () => number = Math.random): Promise<void> {
    this.ticker.start();
    await Promise.all(
      this.vehicles.map(async (v) => {
        await new Promise((r) => setTimeout(r, random() * windowMs));
        await v.agent.start();
        v.started = true;
      }),
    );
  }

  async stop(): Promise<void> {
    this.ticker.stop();
    await Promise.all(this.vehicles.map((v) => v.agent.stop()));
  }

  /** Stops the receivers (the drive ends); the agents go on delivering. */
  stopDriving(): void {
    this.ticker.stop();
  }

  totals(): { recorded: number; pending: number; deadLettered: number; maxPending: number; notIdle: number; maxOldestAgeMs: number } {
    let maxOldestAgeMs = 0;
    let recorded = 0;
    let pending = 0;
    let deadLettered = 0;
    let maxPending = 0;
    let notIdle = 0;
    for (const v of this.vehicles) {
      const c = v.agent.counts();
      if (!c) continue;
      recorded += c.recorded;
      pending += c.pending;
      deadLettered += c.deadLettered;
      maxPending = Math.max(maxPending, c.pending);
      maxOldestAgeMs = Math.max(maxOldestAgeMs, c.oldestPendingAgeMs);
      if (c.pending > 1) notIdle++;
    }
    return { recorded, pending, deadLettered, maxPending, notIdle, maxOldestAgeMs };
  }

  errorLines(): string[] {
    return this.#errorLines;
  }

  writeLog(file: string): void {
    writeFileSync(file, this.#errorLines.join('\n'));
  }

  #onLog(line: string): void {
    let o: { msg?: string; vehicle?: number; delayMs?: number; failures?: number; level?: number };
    try {
      o = JSON.parse(line) as typeof o;
    } catch {
      return;
    }
    const msg = o.msg ?? '';
    this.messages.set(msg, (this.messages.get(msg) ?? 0) + 1);
    if (msg.startsWith('event upload failed') && o.vehicle !== undefined && o.delayMs !== undefined)
      this.retries.push({ vehicle: o.vehicle, atMs: performance.now(), delayMs: o.delayMs, failures: o.failures ?? 0 });
    if ((o.level ?? 0) >= 50 && this.#errorLines.length < 2000) this.#errorLines.push(line);
  }
}
