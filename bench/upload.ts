/**
 * `npm run bench:upload`: store-and-forward figures. Not a test: figures depend on the
 * machine and its load, and are printed, never asserted.
 *   BENCH_FIXES      backlog size for the drain (default 100000)
 *   BENCH_STEADY_S   seconds of 10 Hz steady state measured on `run` (default 60)
 *   BENCH_WARMUP_S   seconds of `run` before the steady-state window opens (default 30)
 */
import os from 'node:os';
import { commitFloor, disk, drain, fmt, steady, wire } from './upload-parts.js';

const N = Number(process.env.BENCH_FIXES ?? 100_000);
const STEADY_S = Number(process.env.BENCH_STEADY_S ?? 60);
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 30);
const WEEK_AT_1HZ = 604_800;

console.log(`upload benchmarks (node ${process.version}, ${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(1)} at start)`);

console.log(`\n1. backlog drain: ${fmt(N)} queued fixes to the simulator on loopback (real outbox, uploader, token manager)`);
for (const [c, external] of [
  [4, true],
  [16, true],
  [16, false],
] as const) {
  const r = await drain(N, c, external);
  const where = external ? 'simulator in its own process' : 'simulator in this process';
  console.log(
    `   concurrency ${String(c).padStart(2)}, ${where}: ${fmt(r.rate)} events/s wall, ${fmt(r.cpuRate)} events per CPU-second of ${external ? 'the agent side' : 'both sides'}; a week offline at 1 Hz (${fmt(WEEK_AT_1HZ)} fixes) drains in ${fmt(WEEK_AT_1HZ / r.rate / 60, 1)} min (target >= 5,000/s: ${fmt(r.rate / 5000, 2)}x)`,
  );
}

console.log(
  '\n2. disk: bytes written per recorded fix, 10 Hz for 60 s of fix time, one commit per second (synchronous=FULL, WAL, 1 KiB pages), checkpoint included; run faster than real time',
);
for (const s of ['offline', 'online-after-commit', 'online-before-commit'] as const) {
  const b = await disk(s);
  console.log(`   ${s.padEnd(21)}: ${fmt(b)} bytes/fix (target <= 200: ${fmt(b / 200, 2)}x)`);
}
console.log('   offline, other storage.commitIntervalMs (a power cut loses at most this much):');
for (const every of [2, 5]) {
  const b = await disk('offline', every);
  console.log(`   commit every ${every} s     : ${fmt(b)} bytes/fix (target <= 200: ${fmt(b / 200, 2)}x)`);
}

const floor = commitFloor();
console.log(
  `   floor: a commit of one 8-byte row costs ${fmt(floor)} bytes here (the fsync'd WAL page, counted per 4 KiB page-cache page), so`,
);
console.log(
  `   one commit a second at 10 Hz can never cost less than ${fmt(floor / 10)} bytes/fix, whatever the rows; at 10 Hz, ${fmt(Math.ceil((floor / 200 / 10) * 10) / 10, 1)} s between commits is the least that could fit 200`,
);

console.log('\n3. wire: request bytes per event (headers + body, as sent by the real requester over keep-alive)');
const w = await wire();
console.log(
  `   ${fmt(w.perEvent)} bytes/event; body ${fmt(w.body)} (${fmt((w.body / w.perEvent) * 100, 1)}%); "authorization: Bearer <token>" line ${fmt(w.bearerLine)} bytes (${fmt((w.bearerLine / w.perEvent) * 100, 1)}%; simulator tokens, a production JWT is longer)`,
);

console.log(
  `\n4. steady state: \`telematics-agent run\` on a 10 Hz replay in real time, ${STEADY_S} s measured after ${WARMUP_S} s of start-up (recording.mode adaptive, online)`,
);
const st = await steady(STEADY_S, WARMUP_S);
const mb = (b: number) => b / 1024 / 1024;
console.log(
  `   CPU ${fmt(st.cpuPerHour, 1)} s per hour = ${fmt((st.cpuPerHour / 3600) * 100, 2)}% of a core (target < 1%: ${fmt(st.cpuPerHour / 36, 2)}x); RSS ${fmt(mb(st.rss), 1)} MB at the end, ${fmt(mb(st.rssMax), 1)} MB at most in the window (target < 80 MB: ${fmt(mb(st.rssMax) / 80, 2)}x); ${fmt(st.recorded)} events delivered in the window`,
);
