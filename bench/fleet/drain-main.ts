/**
 * npm run bench:fleet [-- --n 1000 --capacity-x 3 --outage-min 120 --json FILE]
 *
 * A fleet coming back from a 2-hour events outage, in simulated time: N real Uploaders
 * (the agent's lanes, drain controller and retry decision, unchanged) against a platform of
 * limited capacity (the simulator's capacity model: a FIFO queue served at `capacity-x` times the
 * fleet's steady rate) over a 300 ms round trip. Three runs in one process: the adaptive drain
 * (the default configuration) against a platform that says 429 past a queue of one second and
 * against one that only slows down, and the constant pace it replaced (upload.backlogMaxRatePerS
 * 0.1, concurrency 4: the old defaults) against the first (`--all`: also against the second). The real-agent scenario (a thousand Agents with SQLite,
 * HTTP and the simulator in another process, in accelerated real time) is `-- --real`.
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CapacitySpec } from '../../src/sim/capacity.js';
import { runDrainFleet, type DrainPlan, type DrainResult } from './drain-fleet.js';
import { numberArg } from '../args.js';

const jsonArg = process.argv.indexOf('--json');
const N = numberArg('n', 1000);
const CAPACITY_X = numberArg('capacity-x', 3);
const OUTAGE_MIN = numberArg('outage-min', 120);
const FIX_EVERY_S = numberArg('fix-every-s', 60);
const RTT_MS = numberArg('rtt', 300);
const JSON_FILE = jsonArg >= 0 ? process.argv[jsonArg + 1]! : path.join(process.cwd(), 'dist', 'bench-fleet-drain.json');
const say = (s: string) => process.stdout.write(`${s}\n`);

const steady = N / FIX_EVERY_S;
const rate = Math.round(steady * CAPACITY_X);
const pushback: CapacitySpec = { ratePerS: rate, queueBound: rate, rejectStatus: 429 };
const slowOnly: CapacitySpec = { ratePerS: rate };
const base: Omit<DrainPlan, 'capacity' | 'upload'> = {
  n: N,
  fixEveryS: FIX_EVERY_S,
  rttMs: RTT_MS,
  startWindowMin: 10,
  steadyMin: 20,
  outageMin: OUTAGE_MIN,
  recoveryMaxMin: 240,
  seed: 20,
};
const constantPace = { backlogMaxRatePerS: 0.1, concurrency: 4 };

say(
  `bench:fleet (drain)  N=${N} vehicles, one fix every ${FIX_EVERY_S} s each (0.5x-1.5x, uniform): steady ${steady.toFixed(1)} events/s; ` +
    `platform capacity ${rate}/s (${CAPACITY_X}x steady), ${RTT_MS} ms RTT, events outage ${OUTAGE_MIN} min; simulated time (the agent's upload code on a virtual clock), ${os.cpus().length} cores`,
);
const runs: [string, DrainPlan][] = [
  ['adaptive, 429 past 1 s of queue', { ...base, capacity: pushback, upload: {} }],
  ['adaptive, only slows down', { ...base, capacity: slowOnly, upload: {} }],
  ['constant 0.1/s, 429 past 1 s', { ...base, capacity: pushback, upload: constantPace }],
  // The fourth run only with --all: the bench stays near 10 minutes on 2 shared cores.
  ...(process.argv.includes('--all')
    ? [['constant 0.1/s, only slows down', { ...base, capacity: slowOnly, upload: constantPace }] as [string, DrainPlan]]
    : []),
];
const results: DrainResult[] = [];
for (const [label, plan] of runs) {
  const r = await runDrainFleet(label, plan);
  results.push(r);
  say(`  ${label}: simulated in ${r.wallS.toFixed(0)} s`);
}
say('');
const cols = [
  ['run', (r: DrainResult) => r.label],
  ['backlog', (r: DrainResult) => String(r.backlogAtOutageEnd)],
  ['limit min', (r: DrainResult) => r.physicalLimitMin.toFixed(1)],
  ['drained min', (r: DrainResult) => (r.drainedAfterMin === undefined ? 'NOT' : r.drainedAfterMin.toFixed(1))],
  ['x limit', (r: DrainResult) => (r.drainedAfterMin === undefined ? '-' : (r.drainedAfterMin / r.physicalLimitMin).toFixed(2))],
  ['served peak/s', (r: DrainResult) => `${r.servedPeakPerS.toFixed(1)} of ${r.capacityPerS}`],
  ['429/503', (r: DrainResult) => String(r.rejected)],
  ['timeouts', (r: DrainResult) => String(r.timeouts)],
  ['live p50/p95 s', (r: DrainResult) => `${r.liveDelayP50S.toFixed(1)} / ${r.liveDelayP95S.toFixed(1)}`],
  ['back after s', (r: DrainResult) => `${r.backAfterS[0].toFixed(0)}-${r.backAfterS[1].toFixed(0)}`],
  ['max queue s', (r: DrainResult) => r.maxQueueWaitS.toFixed(1)],
  ['lost', (r: DrainResult) => String(r.lost)],
  ['dup', (r: DrainResult) => String(r.duplicates)],
  ['req/event', (r: DrainResult) => r.requestsPerEvent.toFixed(2)],
] as const;
const cells = results.map((r) => cols.map(([, f]) => f(r)));
const widths = cols.map(([h], i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
say(cols.map(([h], i) => h.padEnd(widths[i]!)).join('  '));
for (const c of cells) say(c.map((v, i) => v.padEnd(widths[i]!)).join('  '));
say(
  'limit: the physical limit, the fleet backlog at the outage end / (capacity - live load); drained: until no vehicle holds a fix from before the outage end; ' +
    "back after: when each vehicle's first event after the outage was accepted (its probe, every half to whole longest upload backoff); " +
    'live delay: platform receipt - fix time of the fixes recorded once their vehicle was back, until the drain ended; max queue: the longest wait in the platform queue (whole run, outage probes included)',
);
say('goals: served within capacity, live p95 <= 2 s during the recovery, drained within 1.25x the limit, 0 lost, 0 duplicates');
writeFileSync(JSON_FILE, JSON.stringify({ n: N, capacityX: CAPACITY_X, outageMin: OUTAGE_MIN, rttMs: RTT_MS, results }, null, 2));
say(`JSON: ${JSON_FILE}`);
