import { Writable } from 'node:stream';
import { configSchemas, type RawConfig } from '../../src/config/schema.js';
import { createLogger } from '../../src/log.js';
import type { RegisteredDevice, RegistrationState } from '../../src/platform/contracts.js';
import type { CapacitySpec } from '../../src/sim/capacity.js';
import { seededRandom } from '../../src/sim/random.js';
import { Uploader } from '../../src/upload/uploader.js';
import { MemoryQueue, ModelPlatform } from './model-platform.js';
import { VirtualTime } from './virtual-time.js';

/**
 * bench:fleet's drain scenarios, in simulated time: N real Uploaders (lanes, drain
 * controller, retry decision: the agent's code, unchanged) on one VirtualTime, each with an
 * outbox in memory and its own recording, against a ModelPlatform of limited capacity. A steady
 * stretch, an events outage of `outageMin`, then the recovery until every backlog is gone.
 */
export interface DrainPlan {
  n: number;
  /** Each vehicle records one fix every this many seconds on average (uniform 0.5x..1.5x). */
  fixEveryS: number;
  capacity: CapacitySpec;
  rttMs: number;
  startWindowMin: number;
  steadyMin: number;
  outageMin: number;
  /** The recovery is watched this long at most. */
  recoveryMaxMin: number;
  /** The agent's upload settings over the schema defaults. */
  upload: Partial<RawConfig['upload']>;
  seed: number;
}

export interface DrainResult {
  label: string;
  backlogAtOutageEnd: number;
  liveLoadPerS: number;
  physicalLimitMin: number;
  drainedAfterMin: number | undefined;
  servedPeakPerS: number;
  capacityPerS: number;
  rejected: number;
  timeouts: number;
  liveDelayP95S: number;
  liveDelayP50S: number;
  /** When the vehicles' first event after the outage was accepted (s after it ended): earliest, latest. */
  backAfterS: [number, number];
  maxQueueWaitS: number;
  /** Longest queue wait (s) per simulated minute from the outage end. */
  queueByMinute: number[];
  recorded: number;
  delivered: number;
  lost: number;
  duplicates: number;
  requestsPerEvent: number;
  wallS: number;
}

const DEVICE: RegisteredDevice = {
  externalSystemId: 'fleet',
  externalDeviceId: 'v',
  source: 'config',
  deviceUUID: '0d6f0b6e-3c1a-4b7e-9d3f-2a1b4c5d6e7f',
};
const registered: RegistrationState = { current: () => DEVICE, whenRegistered: async () => DEVICE };

export async function runDrainFleet(label: string, plan: DrainPlan): Promise<DrainResult> {
  const wall0 = performance.now();
  const T0 = Date.UTC(2026, 10, 23, 6, 0, 0);
  const time = new VirtualTime(T0);
  const random = seededRandom(plan.seed);
  const platform = new ModelPlatform({ capacity: plan.capacity, rttMs: plan.rttMs, requestTimeoutMs: 30_000 }, time);
  const logger = createLogger({ destination: new Writable({ write: (_c, _e, done) => done() }), level: 'silent' });
  const upload = { ...configSchemas().configSchema.shape.upload.parse({}), ...plan.upload };
  const vehicles: { queue: MemoryQueue; uploader: Uploader; drainedAt?: number }[] = [];
  let recorded = 0;
  let fixNo = 0;
  const min = 60_000;
  const outageFrom = (plan.startWindowMin + plan.steadyMin) * min;
  const outageTo = outageFrom + plan.outageMin * min;
  const end = outageTo + plan.recoveryMaxMin * min;
  /** Fix time -> true time; the live delay is receipt minus fix time. */
  const fixTimes = new Map<string, { at: number; vehicle: number }>();
  for (let i = 0; i < plan.n; i++) {
    const queue = new MemoryQueue();
    const uploader = new Uploader({
      queue,
      requester: platform.requester(),
      registration: registered,
      eventsUrl: 'https://planning.example/otm/api/v5/events',
      licensePlate: `FL-${i}`,
      upload,
      clock: time,
      timers: time,
      logger,
      random,
    });
    vehicles.push({ queue, uploader });
    const startAt = random() * plan.startWindowMin * min;
    const record = (): void => {
      const now = time.monotonicMs();
      if (now >= end) return;
      const eventId = `e-${++fixNo}`;
      fixTimes.set(eventId, { at: now, vehicle: i });
      queue.record({ eventId, time: T0 + now, lat: 52 + random() / 10, lon: 5 + random() / 10, speed: 12, track: 90, hdop: 0.8 });
      recorded++;
      time.setTimeout(record, plan.fixEveryS * 1000 * (0.5 + random()));
    };
    time.setTimeout(() => {
      void uploader.start();
      record();
    }, startAt);
  }
  await time.run(outageFrom);
  platform.outage = true;
  await time.run(outageTo);
  platform.outage = false;
  const backlogAtOutageEnd = vehicles.reduce((a, v) => a + v.queue.pendingBefore(T0 + outageTo), 0);
  const liveLoadPerS = plan.n / plan.fixEveryS;
  const spare = Math.max(1e-9, plan.capacity.ratePerS - liveLoadPerS);
  let drainedAt: number | undefined;
  for (let t = outageTo; t < end; t += 10_000) {
    await time.run(t + 10_000);
    let left = 0;
    for (const v of vehicles) {
      if (v.drainedAt !== undefined) continue;
      if (v.queue.pendingBefore(T0 + outageTo) === 0) v.drainedAt = time.monotonicMs();
      else left++;
    }
    if (left === 0 && drainedAt === undefined) drainedAt = time.monotonicMs();
    // Two more minutes after the drain: the live lane's delay settles.
    if (drainedAt !== undefined && time.monotonicMs() >= drainedAt + 2 * min) break;
  }
  const recoveryEnd = drainedAt ?? time.monotonicMs();
  // Each vehicle learns that the outage is over with its next probe (the longest upload backoff, jittered):
  // its recovery starts with its first event accepted after the outage.
  const backAt: number[] = new Array<number>(plan.n).fill(Infinity);
  for (const [id, f] of fixTimes) {
    const got = platform.received.get(id);
    if (got !== undefined && got >= outageTo && got < backAt[f.vehicle]!) backAt[f.vehicle] = got;
  }
  // Live delay during the recovery: fixes recorded once their vehicle was back, until every backlog was gone.
  const delays: number[] = [];
  for (const [id, f] of fixTimes) {
    if (f.at < backAt[f.vehicle]! || f.at > recoveryEnd) continue;
    const got = platform.received.get(id);
    delays.push(((got ?? time.monotonicMs()) - f.at) / 1000);
  }
  const backs = backAt.filter((b) => b !== Infinity).map((b) => (b - outageTo) / 1000);
  delays.sort((a, b) => a - b);
  const q = (p: number) => delays[Math.min(delays.length - 1, Math.floor(p * delays.length))] ?? NaN;
  const served = platform.servedPerSecond.slice(Math.floor(outageTo / 1000), Math.floor(recoveryEnd / 1000));
  let servedPeak = 0;
  for (let s = 0; s + 10 <= served.length; s += 10) {
    let c = 0;
    for (let k = s; k < s + 10; k++) c += served[k] ?? 0;
    servedPeak = Math.max(servedPeak, c / 10);
  }
  const pending = vehicles.reduce((a, v) => a + v.queue.pending, 0);
  const delivered = platform.received.size;
  let requests = 0;
  for (const c of platform.answers.values()) requests += c;
  return {
    label,
    backlogAtOutageEnd,
    liveLoadPerS,
    physicalLimitMin: backlogAtOutageEnd / spare / 60,
    drainedAfterMin: drainedAt === undefined ? undefined : (drainedAt - outageTo) / min,
    servedPeakPerS: servedPeak,
    capacityPerS: plan.capacity.ratePerS,
    rejected: platform.capacity.counters.rejected,
    timeouts: platform.answers.get('timeout') ?? 0,
    liveDelayP50S: q(0.5),
    liveDelayP95S: q(0.95),
    backAfterS: [Math.min(...backs), Math.max(...backs)],
    maxQueueWaitS: Math.max(0, ...platform.maxWaitByMinute.slice(Math.floor(outageTo / min)).map((w) => w ?? 0)) / 1000,
    queueByMinute: platform.maxWaitByMinute.slice(Math.floor(outageTo / min)).map((w) => Math.round((w ?? 0) / 100) / 10),
    recorded,
    delivered,
    lost: Math.max(0, recorded - delivered - pending),
    duplicates: platform.duplicates,
    requestsPerEvent: requests / Math.max(1, delivered),
    wallS: (performance.now() - wall0) / 1000,
  };
}
