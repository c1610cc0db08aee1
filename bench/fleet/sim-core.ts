import {
  PlatformSimulator,
  RequestTimeline,
  type FaultSpec,
  type RouteName,
  type SimStats,
  type SimUrls,
  type TimelineSnapshot,
} from '../../src/sim/index.js';
import { systemClock } from '../../src/system/clock.js';

export const FLEET_USER = { username: 'fleet', password: 'fleet-password' };

export interface SimOptions {
  /** Access token lifetime, seconds of real time (an hour divided by the speed-up). */
  accessTtlS: number;
  refreshTtlS: number;
  /** Timeline bucket, ms of real time. */
  bucketMs: number;
}

/** What the fleet reads back from the simulator at the end. */
export interface SimSummary {
  stats: SimStats;
  /** Distinct events received per licence plate (one plate per vehicle). */
  eventsByPlate: Record<string, number>;
  /** Deliveries beyond the first, summed over events. */
  duplicateDeliveries: number;
  /** CPU the simulator's process used since it started, ms (user + system). */
  cpuMs: number;
  uptimeMs: number;
}

/** The simulator with a request timeline: the same object in-process (tests) and in the child process (bench). */
export class SimCore {
  readonly sim: PlatformSimulator;
  #timeline: RequestTimeline | undefined;
  readonly #options: SimOptions;
  readonly #startedAt = performance.now();

  constructor(options: SimOptions) {
    this.#options = options;
    this.sim = new PlatformSimulator({ users: [FLEET_USER], accessTtlS: options.accessTtlS, refreshTtlS: options.refreshTtlS, seed: 15 });
  }

  async start(): Promise<SimUrls> {
    const urls = await this.sim.start({ idleTimeoutMs: 5000 });
    this.#timeline = new RequestTimeline(this.sim, { bucketMs: this.#options.bucketMs, clock: systemClock });
    return urls;
  }

  setFaults(route: RouteName, spec: FaultSpec | null): void {
    this.sim.setFaults(route, spec ?? undefined);
  }

  expireAccessTokens(): void {
    this.sim.expireAccessTokens();
  }

  /** Starts the timeline again from now (bucket 0 = the fleet's first start). */
  restartTimeline(): void {
    this.#timeline?.stop();
    this.#timeline = new RequestTimeline(this.sim, { bucketMs: this.#options.bucketMs, clock: systemClock });
  }

  timeline(): TimelineSnapshot {
    return this.#timeline!.snapshot();
  }

  summary(): SimSummary {
    const eventsByPlate: Record<string, number> = {};
    let duplicateDeliveries = 0;
    for (const e of this.sim.events.values()) {
      const plate = /"licensePlate":"([^"]+)"/.exec(JSON.stringify(e.event))?.[1] ?? '(none)';
      eventsByPlate[plate] = (eventsByPlate[plate] ?? 0) + 1;
      duplicateDeliveries += e.deliveries - 1;
    }
    const cpu = process.cpuUsage();
    return {
      stats: this.sim.stats,
      eventsByPlate,
      duplicateDeliveries,
      cpuMs: (cpu.user + cpu.system) / 1000,
      uptimeMs: performance.now() - this.#startedAt,
    };
  }

  async stop(): Promise<void> {
    this.#timeline?.stop();
    await this.sim.stop();
  }
}

/** The simulator as the fleet drives it, wherever it runs. */
export interface SimHandle {
  urls: SimUrls;
  setFaults(route: RouteName, spec: FaultSpec | null): Promise<void>;
  expireAccessTokens(): Promise<void>;
  restartTimeline(): Promise<void>;
  timeline(): Promise<TimelineSnapshot>;
  summary(): Promise<SimSummary>;
  stop(): Promise<void>;
}

export async function simInProcess(options: SimOptions): Promise<SimHandle> {
  const core = new SimCore(options);
  const urls = await core.start();
  return {
    urls,
    setFaults: async (route, spec) => core.setFaults(route, spec),
    expireAccessTokens: async () => core.expireAccessTokens(),
    restartTimeline: async () => core.restartTimeline(),
    timeline: async () => core.timeline(),
    summary: async () => core.summary(),
    stop: () => core.stop(),
  };
}
