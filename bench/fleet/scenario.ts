import os from 'node:os';
import { readFileSync } from 'node:fs';
import type { RouteName, TimelineSnapshot } from '../../src/sim/index.js';
import type { Fleet } from './fleet.js';
import type { SimHandle, SimSummary } from './sim-core.js';

/** The scenario, in simulated minutes from the first agent's start. */
export interface Plan {
  speed: number;
  /** Agents start at random moments of [0, startWindowMin] (the staggered morning start). */
  startWindowMin: number;
  steadyFromMin: number;
  /** The events route answers 503 to everything. */
  outageFromMin: number;
  outageToMin: number;
  /** Backlogs must be drained within this long after the outage. */
  drainLimitMin: number;
  /** The token service (password and refresh) answers 503. */
  tokenOutageFromMin?: number;
  tokenOutageToMin?: number;
  /** At the token outage's start every access token stops working (a key rotation): every agent needs the token service. */
  expireTokensAtTokenOutage?: boolean;
  endMin: number;
  /** A fix older than this (GNSS seconds) still queued counts as backlog. */
  backlogAgeS: number;
}

export interface Figures {
  n: number;
  speed: number;
  simulatedHours: number;
  realSeconds: number;
  /** Platform requests per device-hour, by kind (answered 2xx), and failed requests (each retried later). */
  perDeviceHour: { passwordGrants: number; refreshes: number; deviceUpserts: number; events: number; failedRequests: number };
  /** Events requests per simulated second at the platform, over 10-s windows. */
  rate: {
    steady: number;
    steadyBeforeOutage: number;
    duringOutage: number;
    recoveryPeak: number;
    peakToSteady: number;
    tokenOutagePeak?: number;
  };
  drain: { minutesAfterOutage: number | undefined; limitMin: number };
  startup: { passwordGrantPeakPerS: number; upsertPeakPerS: number; spreadOverS: number };
  firstRetries: { vehicles: number; minDelayS: number; maxDelayS: number; maxInOneSecond: number };
  budget: { passwordGrantsAfterFirst: number; upsertsAfterRegistration: number; refreshesPerDeviceHour: number };
  delivery: { recorded: number; delivered: number; lost: number; duplicated: number; pending: number; deadLettered: number };
  fleetProcess: {
    cpuPercentOfCore: number;
    cpuMsPerAgentPerSimHour: number;
    rssMiBPerAgent: number;
    rssMiB: number;
    tickerMaxCatchUp: number;
  };
  simulator: { cpuPercentOfCore: number; connections: number };
  machine: { cores: number; loadBefore: number[]; loadAfter: number[]; busyPercent: number };
  timeline: { simSecond: number; events: number; failed: number; tokens: number }[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

function cpuTotals(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = (f[3] ?? 0) + (f[4] ?? 0);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

export async function runScenario(
  fleet: Fleet,
  sim: SimHandle,
  plan: Plan,
  say: (line: string) => void = () => undefined,
): Promise<Figures> {
  const realMs = (min: number) => (min * 60_000) / plan.speed;
  const loadBefore = os.loadavg();
  const cpuBefore = cpuTotals();
  const rssBefore = process.memoryUsage().rss;
  const ownCpuBefore = process.cpuUsage();
  await sim.restartTimeline();
  const t0 = performance.now();
  const at = (min: number) => sleep(t0 + realMs(min) - performance.now());
  const simMinNow = () => ((performance.now() - t0) * plan.speed) / 60_000;

  say(`starting ${fleet.vehicles.length} agents over ${plan.startWindowMin} simulated minutes`);
  await fleet.start(realMs(plan.startWindowMin));
  const rssStarted = process.memoryUsage().rss;
  say(`all agents running at ${simMinNow().toFixed(1)} min; rss ${(rssStarted / 2 ** 20).toFixed(0)} MiB`);

  await at(plan.outageFromMin);
  await sim.setFaults('events', { status503Rate: 1 });
  const outageStartReal = performance.now();
  say(`events outage from ${simMinNow().toFixed(1)} min`);
  await at(plan.outageToMin);
  await sim.setFaults('events', null);
  say(`events outage over at ${simMinNow().toFixed(1)} min: ${fleet.totals().pending} fixes queued across the fleet`);

  // Drained: no agent holds a fix older than backlogAgeS (GNSS) any more.
  let drainedMin: number | undefined;
  const drainDeadline = Math.min(plan.endMin, plan.tokenOutageFromMin ?? plan.endMin);
  while (simMinNow() < drainDeadline) {
    const t = fleet.totals();
    if (t.maxOldestAgeMs <= plan.backlogAgeS * 1000) {
      drainedMin = simMinNow() - plan.outageToMin;
      break;
    }
    // Watching costs the fleet's event loop too: once a simulated 10 s (at most once a real second).
    await sleep(Math.max(1000, realMs(1 / 6)));
  }
  say(
    drainedMin === undefined
      ? 'backlogs NOT drained before the next phase'
      : `all backlogs drained ${drainedMin.toFixed(1)} min after the outage`,
  );

  if (plan.tokenOutageFromMin !== undefined && plan.tokenOutageToMin !== undefined) {
    await at(plan.tokenOutageFromMin);
    await sim.setFaults('auth.refresh', { status503Rate: 1 });
    await sim.setFaults('auth.password', { status503Rate: 1 });
    if (plan.expireTokensAtTokenOutage) await sim.expireAccessTokens();
    say(`token service outage from ${simMinNow().toFixed(1)} min`);
    await at(plan.tokenOutageToMin);
    await sim.setFaults('auth.refresh', null);
    await sim.setFaults('auth.password', null);
    say(`token service back at ${simMinNow().toFixed(1)} min`);
  }

  await at(plan.endMin);
  fleet.stopDriving();
  const endReal = performance.now();
  say(`drive ends at ${simMinNow().toFixed(1)} min; waiting for the last deliveries`);
  const settleUntil = performance.now() + Math.max(20_000, realMs(10));
  while (performance.now() < settleUntil && fleet.totals().pending > 0) await sleep(200);
  const totals = fleet.totals();
  const ownCpu = process.cpuUsage(ownCpuBefore);
  const rssEnd = process.memoryUsage().rss;
  const cpuAfter = cpuTotals();
  const summary = await sim.summary();
  const timeline = await sim.timeline();
  const figures = analyse(fleet, plan, {
    summary,
    timeline,
    totals,
    t0,
    outageStartReal,
    endReal,
    ownCpuMs: (ownCpu.user + ownCpu.system) / 1000,
    rss: { before: rssBefore, started: rssStarted, end: rssEnd },
    machine: {
      loadBefore,
      loadAfter: os.loadavg(),
      busyPercent: (100 * (cpuAfter.busy - cpuBefore.busy)) / Math.max(1, cpuAfter.total - cpuBefore.total),
    },
    drainedMin,
  });
  return figures;
}

interface Facts {
  summary: SimSummary;
  timeline: TimelineSnapshot;
  totals: ReturnType<Fleet['totals']>;
  t0: number;
  outageStartReal: number;
  endReal: number;
  ownCpuMs: number;
  rss: { before: number; started: number; end: number };
  machine: { loadBefore: number[]; loadAfter: number[]; busyPercent: number };
  drainedMin: number | undefined;
}

const sum = (r: Record<RouteName, number>, ...keys: RouteName[]) => keys.reduce((a, k) => a + r[k], 0);

function analyse(fleet: Fleet, plan: Plan, f: Facts): Figures {
  const n = fleet.vehicles.length;
  const simHours = plan.endMin / 60;
  const { stats } = f.summary;
  // The timeline's buckets are one simulated second each.
  const perSecond = f.timeline.buckets.map((b, i) => ({
    simSecond: i,
    events: b.ok.events + b.failed.events,
    failed: sum(b.failed, 'events', 'auth.password', 'auth.refresh', 'devices'),
    tokens: sum(b.ok, 'auth.password', 'auth.refresh') + sum(b.failed, 'auth.password', 'auth.refresh'),
    grants: b.ok['auth.password'],
    upserts: b.ok.devices + b.failed.devices,
  }));
  const windowRate = (fromS: number, toS: number, pick: (s: (typeof perSecond)[number]) => number) => {
    const out: number[] = [];
    for (let s = fromS; s + 10 <= toS; s += 10) {
      let c = 0;
      for (let k = s; k < s + 10; k++) c += perSecond[k] ? pick(perSecond[k]!) : 0;
      out.push(c / 10);
    }
    return out;
  };
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  // Steady: every fault-free stretch of driving after the start (before the outage, and after its
  // recovery window until the token outage). The synthetic drive parks at a depot, so any one
  // stretch alone over- or understates what the fleet sends on average.
  const steady = mean([
    ...windowRate(plan.steadyFromMin * 60, plan.outageFromMin * 60, (s) => s.events),
    ...windowRate((plan.outageToMin + plan.drainLimitMin) * 60, (plan.tokenOutageFromMin ?? plan.endMin) * 60, (s) => s.events),
  ]);
  const during = mean(windowRate(plan.outageFromMin * 60, plan.outageToMin * 60, (s) => s.events));
  const recovery = windowRate(plan.outageToMin * 60, (plan.outageToMin + plan.drainLimitMin) * 60, (s) => s.events);
  const recoveryPeak = Math.max(0, ...recovery);
  const tokenPeak =
    plan.tokenOutageFromMin !== undefined
      ? Math.max(0, ...windowRate(plan.tokenOutageFromMin * 60, plan.endMin * 60, (s) => s.events))
      : undefined;
  const startEnd = (plan.startWindowMin + 2) * 60;
  const grantsPeak = Math.max(0, ...perSecond.slice(0, startEnd).map((s) => s.grants));
  const upsertPeak = Math.max(0, ...perSecond.slice(0, startEnd).map((s) => s.upserts));
  const grantSeconds = perSecond.filter((s) => s.grants > 0).map((s) => s.simSecond);
  // First retries after the events outage began: each vehicle's first backoff, and when it ends.
  const firstRetry = new Map<number, { atMs: number; delayMs: number }>();
  for (const r of fleet.retries) if (r.atMs >= f.outageStartReal && !firstRetry.has(r.vehicle)) firstRetry.set(r.vehicle, r);
  const firstDelays = [...firstRetry.values()].map((r) => (r.delayMs * plan.speed) / 1000);
  const retrySeconds = new Map<number, number>();
  for (const r of firstRetry.values()) {
    const s = Math.floor(((r.atMs + r.delayMs - f.t0) * plan.speed) / 1000);
    retrySeconds.set(s, (retrySeconds.get(s) ?? 0) + 1);
  }
  let delivered = 0;
  let lost = 0;
  for (const v of fleet.vehicles) {
    const c = v.agent.counts();
    const got = f.summary.eventsByPlate[v.plate] ?? 0;
    delivered += got;
    if (c) lost += Math.max(0, c.recorded - got - c.pending);
  }
  const failedRequests = sum(stats.faults, 'events', 'auth.password', 'auth.refresh', 'devices');
  const realSeconds = (f.endReal - f.t0) / 1000;
  return {
    n,
    speed: plan.speed,
    simulatedHours: simHours,
    realSeconds,
    perDeviceHour: {
      passwordGrants: stats.passwordGrants / n / simHours,
      refreshes: stats.refreshes / n / simHours,
      deviceUpserts: stats.requests.devices / n / simHours,
      events: stats.requests.events / n / simHours,
      failedRequests: failedRequests / n / simHours,
    },
    rate: {
      steady,
      steadyBeforeOutage: mean(windowRate(plan.steadyFromMin * 60, plan.outageFromMin * 60, (s) => s.events)),
      duringOutage: during,
      recoveryPeak,
      peakToSteady: steady > 0 ? recoveryPeak / steady : 0,
      ...(tokenPeak !== undefined ? { tokenOutagePeak: tokenPeak } : {}),
    },
    drain: { minutesAfterOutage: f.drainedMin, limitMin: plan.drainLimitMin },
    startup: {
      passwordGrantPeakPerS: grantsPeak,
      upsertPeakPerS: upsertPeak,
      spreadOverS: grantSeconds.length ? grantSeconds.at(-1)! - grantSeconds[0]! + 1 : 0,
    },
    firstRetries: {
      vehicles: firstRetry.size,
      minDelayS: firstDelays.length ? Math.min(...firstDelays) : 0,
      maxDelayS: firstDelays.length ? Math.max(...firstDelays) : 0,
      maxInOneSecond: Math.max(0, ...retrySeconds.values()),
    },
    budget: {
      passwordGrantsAfterFirst: stats.passwordGrants + stats.passwordRejected - n,
      upsertsAfterRegistration: stats.requests.devices - n,
      refreshesPerDeviceHour: stats.refreshes / n / simHours,
    },
    delivery: {
      recorded: f.totals.recorded,
      delivered,
      lost,
      duplicated: f.summary.duplicateDeliveries,
      pending: f.totals.pending,
      deadLettered: f.totals.deadLettered,
    },
    fleetProcess: {
      cpuPercentOfCore: (100 * f.ownCpuMs) / (realSeconds * 1000),
      cpuMsPerAgentPerSimHour: f.ownCpuMs / n / simHours,
      rssMiBPerAgent: (f.rss.end - f.rss.before) / 2 ** 20 / n,
      rssMiB: f.rss.end / 2 ** 20,
      tickerMaxCatchUp: fleet.ticker.maxCatchUp,
    },
    simulator: { cpuPercentOfCore: (100 * f.summary.cpuMs) / Math.max(1, f.summary.uptimeMs), connections: stats.connections.opened },
    machine: { cores: os.cpus().length, ...f.machine },
    timeline: perSecond.map(({ simSecond, events, failed, tokens }) => ({ simSecond, events, failed, tokens })),
  };
}
