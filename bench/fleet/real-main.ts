/**
 * npm run bench:fleet -- --real [--n 1000 --speed 10 --rate 0.1 --json FILE]
 *
 * A thousand real Agents in this process, each with its own data directory, hardware serial,
 * configuration and replayed receiver, against the platform simulator in another process (issue
 * 15). The scenario, in accelerated time: a staggered morning start, steady driving, a 5-minute
 * outage of the events route, recovery, and a token-service outage while the hour-long tokens come
 * due. Printed as a table, written as JSON. `--rate 0` is the unpaced baseline to compare with.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { driveVariants } from './drives.js';
import { Fleet, scaledConfig } from './fleet.js';
import { runScenario, type Figures, type Plan } from './scenario.js';
import { simChildProcess } from './sim-process.js';
import { numberArg } from '../args.js';

const jsonArg = process.argv.indexOf('--json');
const N = numberArg('n', 1000);
const SPEED = numberArg('speed', 10);
// --rate R: a backlog rate ceiling (upload.backlogMaxRatePerS); 0 (default) lets the drain adapt.
const RATE = numberArg('rate', 0);
const JITTER_S = numberArg('startup-jitter', 30);
const JSON_FILE = jsonArg >= 0 ? process.argv[jsonArg + 1]! : path.join(process.cwd(), 'dist', 'bench-fleet.json');

// The morning start is spread over 10 minutes (vehicles leave the depot one after another; also, one
// process cannot boot a thousand agents, each opening its database, in less than about a minute).
const PLAN: Plan = {
  speed: SPEED,
  startWindowMin: 10,
  steadyFromMin: 15,
  outageFromMin: 25,
  outageToMin: 30,
  drainLimitMin: 15,
  // The first tokens (received at 0 .. 10.5 min) come due at about 58 .. 68 min: the outage is then.
  tokenOutageFromMin: 60,
  tokenOutageToMin: 65,
  endMin: 70,
  backlogAgeS: 60,
};

const say = (s: string) => process.stdout.write(`${s}\n`);
const wallStart = performance.now();
// A thousand gateways each have their own flash; one machine's disk cannot stand in for them (a
// thousand SQLite files syncing on one disk stall the whole process). The data directories go to
// memory (/dev/shm) where there is one: what is measured here is the platform traffic, not the disk.
const DATA_ROOT = existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();
const dir = mkdtempSync(path.join(DATA_ROOT, 'bench-fleet-'));
const scaled = scaledConfig({ speed: SPEED, backlogMaxRatePerS: RATE, startupJitterS: JITTER_S });
say(`data directories in ${DATA_ROOT} (memory: the disk is not what is measured)`);
say(
  `bench:fleet  N=${N}  speed ${SPEED}x (1 real s = ${SPEED} simulated s)  upload.backlogMaxRatePerS ${RATE || 'none (adaptive)'}  platform.startupJitterS ${JITTER_S}`,
);
say(
  `scaled together by ${SPEED}: replay, access token lifetime 3600 s -> ${3600 / SPEED} s, refresh token 86400 s -> ${86_400 / SPEED} s, ` +
    `upload backoff ${scaled.tuning.upload.minBackoffMs} .. ${scaled.tuning.upload.maxBackoffMs} ms, token service backoff ${scaled.tuning.platform.tokenServiceRetryMinS} .. ${scaled.tuning.platform.tokenServiceRetryMaxS} s, ` +
    `backlog rate ceiling ${scaled.upload.backlogMaxRatePerS || 'none'}/s, start-up spread ${scaled.platform.startupJitterS} s, commit every ${scaled.storage.commitIntervalMs} ms (all real time)`,
);
say(
  `scenario (simulated min): start over 0-${PLAN.startWindowMin}, steady ${PLAN.steadyFromMin}-${PLAN.outageFromMin}, events outage ${PLAN.outageFromMin}-${PLAN.outageToMin}, ` +
    `token service outage ${PLAN.tokenOutageFromMin}-${PLAN.tokenOutageToMin}, end ${PLAN.endMin}; drives: the synthetic drive (ZDA/RMC/GGA), 20 route variants, own start offsets`,
);

// Ctrl-C: the data directories are in memory, so they go too (and the simulator with its process).
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    rmSync(dir, { recursive: true, force: true });
    process.exit(130);
  });

const sim = await simChildProcess({ accessTtlS: 3600 / SPEED, refreshTtlS: 86_400 / SPEED, bucketMs: 1000 / SPEED });
let fleet: Fleet | undefined;
try {
  const variants = driveVariants(20, PLAN.endMin + 35);
  fleet = new Fleet({ n: N, dir, urls: sim.urls, variants, scaling: { speed: SPEED, backlogMaxRatePerS: RATE, startupJitterS: JITTER_S } });
  const figures = await runScenario(fleet, sim, PLAN, (s) => say(`  [${((performance.now() - wallStart) / 1000).toFixed(0)} s] ${s}`));
  await fleet.stop();
  fleet.writeLog(path.join(path.dirname(JSON_FILE), 'bench-fleet-errors.log'));
  print(figures);
  writeFileSync(
    JSON_FILE,
    JSON.stringify({ plan: PLAN, scaling: scaled, rate: RATE, figures, messages: Object.fromEntries(fleet.messages) }, null, 2),
  );
  say(`JSON: ${JSON_FILE}; bench wall time ${((performance.now() - wallStart) / 1000).toFixed(0)} s`);
} finally {
  await fleet?.stop().catch(() => undefined);
  await sim.stop();
  rmSync(dir, { recursive: true, force: true });
}

function print(f: Figures): void {
  const r = (x: number, d = 2) => x.toFixed(d);
  const rows: [string, string, string][] = [
    [
      'password grants / device-hour',
      r(f.perDeviceHour.passwordGrants, 3),
      `after the first: ${f.budget.passwordGrantsAfterFirst} (goal 0)`,
    ],
    ['refreshes / device-hour', r(f.perDeviceHour.refreshes, 3), 'goal <= 1 with hour-long tokens'],
    [
      'device upserts / device-hour',
      r(f.perDeviceHour.deviceUpserts, 3),
      `after registration: ${f.budget.upsertsAfterRegistration} (goal 0)`,
    ],
    ['events / device-hour', r(f.perDeviceHour.events, 1), 'event requests, failed ones included'],
    ['failed requests / device-hour', r(f.perDeviceHour.failedRequests, 2), 'each retried later (outages)'],
    ['events/s steady', r(f.rate.steady), 'mean of the fault-free driving, 10-s windows, simulated seconds'],
    [
      'events/s 10 min before the outage',
      r(f.rate.steadyBeforeOutage),
      `recovery peak is ${r(f.rate.recoveryPeak / Math.max(1e-9, f.rate.steadyBeforeOutage))}x this`,
    ],
    ['events/s during outage', r(f.rate.duringOutage), 'probes while backing off'],
    ['events/s recovery peak', r(f.rate.recoveryPeak), `${r(f.rate.peakToSteady)}x steady (goal <= 3x)`],
    ['events/s peak, token outage', r(f.rate.tokenOutagePeak ?? 0), ''],
    [
      'backlogs drained after',
      f.drain.minutesAfterOutage === undefined ? 'NOT' : `${r(f.drain.minutesAfterOutage, 1)} min`,
      `goal <= ${f.drain.limitMin} min`,
    ],
    ['first password grants', `${f.startup.passwordGrantPeakPerS}/s peak`, `spread over ${f.startup.spreadOverS} s`],
    [
      'first retries after the outage',
      `${f.firstRetries.vehicles} agents`,
      `delays ${r(f.firstRetries.minDelayS, 1)} .. ${r(f.firstRetries.maxDelayS, 1)} s, at most ${f.firstRetries.maxInOneSecond} in one second`,
    ],
    [
      'fixes recorded / delivered',
      `${f.delivery.recorded} / ${f.delivery.delivered}`,
      `lost ${f.delivery.lost}, duplicated ${f.delivery.duplicated}, pending ${f.delivery.pending}, dead letters ${f.delivery.deadLettered}`,
    ],
    [
      'fleet process CPU',
      `${r(f.fleetProcess.cpuPercentOfCore, 0)} % of a core`,
      `${r(f.fleetProcess.cpuMsPerAgentPerSimHour, 0)} ms per agent per simulated hour`,
    ],
    [
      'fleet process RSS',
      `${r(f.fleetProcess.rssMiB, 0)} MiB`,
      `${r(f.fleetProcess.rssMiBPerAgent, 2)} MiB per agent; ticker fell behind by ${f.fleetProcess.tickerMaxCatchUp} ticks at most`,
    ],
    ['simulator CPU', `${r(f.simulator.cpuPercentOfCore, 0)} % of a core`, `${f.simulator.connections} connections accepted`],
    [
      'machine',
      `${f.machine.cores} cores, ${r(f.machine.busyPercent, 0)} % busy`,
      `load ${f.machine.loadBefore.map((x) => r(x)).join(' ')} before, ${f.machine.loadAfter.map((x) => r(x)).join(' ')} after (all users)`,
    ],
  ];
  const w0 = Math.max(...rows.map((x) => x[0].length));
  const w1 = Math.max(...rows.map((x) => x[1].length));
  say('');
  for (const [a, b, c] of rows) say(`${a.padEnd(w0)}  ${b.padStart(w1)}  ${c}`);
  say(`simulated ${r(f.simulatedHours * 60, 0)} min in ${r(f.realSeconds, 0)} s`);
}
