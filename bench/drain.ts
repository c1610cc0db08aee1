/**
 * npm run bench:drain [-- --live-min 10 --rtt 300]
 *
 * One vehicle as it lives: the real Agent with the default configuration, TLS with h2
 * to the simulator (real-length tokens, echoed events: the simulator's defaults), through a relay
 * that adds a 300 ms round trip. Printed, never asserted.
 *
 * 1. A backlog found at start, drained from the device upsert's answer: 3 days x 10 h of the
 *    default `path` recording (7,343 events, the count the issue measured) and 6 h of `all` at
 *    1 Hz (21,600). The fixes are written into the outbox before the agent starts (not recorded
 *    through the pipeline: the drain is what is measured); the drain itself is real time.
 *    With --handover instead: the 3 days three times, each with a live 1 Hz drive beside it (the
 *    live lane's delay): the round trip constant at --rtt, stepping from --rtt to --rtt-to (450 ms)
 *    once half the backlog is delivered (a cellular handover), and back from --rtt-to to --rtt.
 * 2. 10 Hz `recording.mode: "all"` live for --live-min minutes (real time, the synthetic drive
 *    replayed as recorded): the backlog while driving, the live delay (platform receipt minus
 *    GNSS time), and whether every fix arrived.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { Agent } from '../src/agent.js';
import { parseConfig } from '../src/config/load.js';
import type { RecordedFix } from '../src/fix/fix.js';
import type { LinkState, NmeaSource } from '../src/gnss/sources/source.js';
import { createLogger } from '../src/log.js';
import { LinkRelay, PlatformSimulator } from '../src/sim/index.js';
import { generateDrive } from '../src/sim/receiver/drive.js';
import { makeThrowawayCa } from '../src/sim/throwaway-ca.js';
import { IDENTITY, openOutbox } from './upload-rig.js';
import { numberArg } from './args.js';

const RTT_MS = numberArg('rtt', 300);
const LIVE_MIN = numberArg('live-min', 10);
const ONLY = process.argv.includes('--only-path') ? 'path' : undefined;
const HANDOVER = process.argv.includes('--handover');
const RTT_TO_MS = numberArg('rtt-to', 450);
const say = (s: string) => process.stdout.write(`${s}\n`);
const root = mkdtempSync(path.join(os.tmpdir(), 'bench-drain-'));
const ca = makeThrowawayCa(mkdtempSync(path.join(root, 'ca-')));
const USER = { username: 'agent', password: 'agent-password' };

/** A receiver that says nothing (the backlog scenarios: no live traffic). */
class SilentSource implements NmeaSource {
  async start(): Promise<void> {}
  async stop(): Promise<void> {}
  onData(): void {}
  link(): LinkState {
    return { status: 'open', path: 'silent', attempts: 0, bytes: 0 };
  }
}

interface Rig {
  sim: PlatformSimulator;
  relay: LinkRelay;
  base: string;
  upsertAnsweredAt?: number;
  stop(): Promise<void>;
}

async function platform(rttMs = RTT_MS): Promise<Rig> {
  const sim = new PlatformSimulator({ users: [USER] });
  const urls = await sim.start({ tls: { key: ca.key, cert: ca.cert, protocols: 'h2' }, idleTimeoutMs: 60_000 });
  const relay = new LinkRelay({ rttMs });
  const port = await relay.start({ host: '127.0.0.1', port: urls.port });
  const rig: Rig = {
    sim,
    relay,
    base: `https://127.0.0.1:${port}`,
    async stop() {
      await relay.stop();
      await sim.stop();
    },
  };
  sim.onRequest((route, status) => {
    // The device upsert's answer leaves the simulator now and reaches the agent half a round trip later.
    if (route === 'devices' && status === 200 && rig.upsertAnsweredAt === undefined) rig.upsertAnsweredAt = performance.now() + rttMs / 2;
  });
  return rig;
}

function agentConfig(rig: Rig, dataDir: string, extra: { gnss?: Record<string, unknown>; recording?: Record<string, unknown> }) {
  return parseConfig(
    {
      environment: 'staging',
      platform: {
        authUrl: `${rig.base}/api/v1`,
        deviceUrl: `${rig.base}/api/public/v2/`,
        planningUrl: rig.base,
        caFile: ca.caFile,
        // The start-up spread only delays the first token; the drain is measured from the upsert's answer.
        startupJitterS: 0,
      },
      credentials: USER,
      device: { ...IDENTITY, carrierCode: 'SIM', licensePlate: 'DRAIN-1' },
      gnss: extra.gnss ?? { replayFile: '/dev/null' },
      ...(extra.recording ? { recording: extra.recording } : {}),
      dataDir,
      log: { level: 'warn' },
      status: { socketPath: path.join(dataDir, 's.sock') },
    },
    { source: 'bench:drain', env: {} },
  );
}

const sink = new Writable({ write: (_c, _e, done) => done() });
const logger = createLogger({ destination: sink, level: 'warn' });

/** Fixes of `count` events spread over the given shifts (GNSS times of days gone by). */
function backlogFixes(count: number, shifts: number, hoursPerShift: number): RecordedFix[] {
  const day0 = Date.UTC(2026, 10, 20, 6, 0, 0);
  const perShift = Math.ceil(count / shifts);
  const fixes: RecordedFix[] = [];
  for (let i = 0; i < count; i++) {
    const shift = Math.floor(i / perShift);
    const k = i % perShift;
    const time = day0 + shift * 86_400_000 + Math.floor((k * hoursPerShift * 3_600_000) / perShift);
    fixes.push({
      time,
      mode: 3,
      lat: 52.09 + k * 1e-5,
      lon: 5.12 + k * 1.3e-5,
      altMSL: 4,
      speed: 13.9,
      track: 56.3,
      hdop: 0.8,
      satellitesUsed: 12,
    });
  }
  return fixes;
}

interface DrainFigures {
  name: string;
  events: number;
  drainS: number;
  ratePerS: number;
  maxWindow: number;
  limits: string[];
  duplicates: number;
  bytesUp: number;
  bytesDown: number;
  /** With a live drive beside the backlog: the live fixes' delay, receipt minus GNSS time (s). */
  live?: { count: number; p50S: number; p95S: number; maxS: number };
}

/** A handover in the middle of the drain: the round trip from `fromMs` to `toMs` once half the backlog is delivered. */
interface DrainOptions {
  rtt?: { fromMs: number; toMs: number };
  /** A 1 Hz drive live beside the backlog (recording.mode "all"), its GNSS time now. */
  live?: boolean;
}

async function drainScenario(name: string, fixes: RecordedFix[], o: DrainOptions = {}): Promise<DrainFigures> {
  const dataDir = mkdtempSync(path.join(root, 'v-'));
  const { db, outbox } = openOutbox(dataDir, { commitMaxFixes: 10_000 });
  await outbox.start();
  for (const f of fixes) outbox.record(f);
  outbox.flush();
  await outbox.stop();
  db.close();
  const rig = await platform(o.rtt?.fromMs);
  const liveFrom = Date.now() + 2000;
  let extra = {};
  if (o.live) {
    const file = path.join(dataDir, 'drive.nmea');
    const drive = generateDrive({ minutes: 30, hz: 1, seed: 8, startTimeMs: liveFrom });
    writeFileSync(file, drive.lines.map((l) => `${l}\r\n`).join(''));
    extra = { gnss: { replayFile: file, replaySpeed: 1 }, recording: { mode: 'all', minIntervalS: 0 } };
  }
  const config = agentConfig(rig, dataDir, extra);
  const agent = new Agent({ config, logger, env: {}, ...(o.live ? {} : { source: new SilentSource() }), shutdownGraceMs: 500 });
  const backlogDone = () => {
    let n = 0;
    for (const e of rig.sim.events.values()) if (Date.parse(String(e.event.creationDate)) < liveFrom) n++;
    return n;
  };
  let stepped = !o.rtt;
  let maxWindow = 0;
  const limits = new Set<string>();
  await agent.start();
  let lastSay = performance.now();
  for (;;) {
    const c = agent.counts();
    if (c && performance.now() - lastSay > 15_000) {
      lastSay = performance.now();
      const d = c.drain;
      say(
        `    ${name}: ${c.pending} to go, ${d.ratePerS}/s, window ${d.window}, ${d.limit}, latency ${d.latencyMs ?? '-'} ms (base ${d.baseLatencyMs ?? '-'})`,
      );
    }
    if (c) {
      maxWindow = Math.max(maxWindow, c.drain.window);
      if (rig.upsertAnsweredAt !== undefined) limits.add(c.drain.limit);
      const done = o.live ? backlogDone() : rig.sim.events.size;
      if (!stepped && o.rtt && done >= fixes.length / 2) {
        stepped = true;
        rig.relay.setRtt(o.rtt.toMs);
        say(`    ${name}: half delivered, the round trip is now ${o.rtt.toMs} ms`);
      }
      if ((o.live || c.pending === 0) && done >= fixes.length) break;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const drainS = (performance.now() - rig.upsertAnsweredAt!) / 1000;
  await agent.stop();
  const delays = [...rig.sim.events.values()]
    .map((e) => ({ at: Date.parse(String(e.event.creationDate)), receivedAt: e.receivedAt }))
    .filter((e) => e.at >= liveFrom)
    .map((e) => (e.receivedAt - e.at) / 1000)
    .sort((a, b) => a - b);
  const q = (p: number) => delays[Math.min(delays.length - 1, Math.floor(p * delays.length))] ?? NaN;
  const figures = {
    name,
    events: rig.sim.events.size,
    drainS,
    ratePerS: fixes.length / drainS,
    maxWindow,
    limits: [...limits],
    duplicates: rig.sim.stats.duplicates,
    bytesUp: rig.relay.bytes.up,
    bytesDown: rig.relay.bytes.down,
    ...(o.live ? { live: { count: delays.length, p50S: q(0.5), p95S: q(0.95), maxS: delays.at(-1) ?? NaN } } : {}),
  };
  await rig.stop();
  return figures;
}

interface LiveFigures {
  minutes: number;
  recorded: number;
  delivered: number;
  duplicates: number;
  maxPending: number;
  delayP50S: number;
  delayP95S: number;
  delayMaxS: number;
}

async function liveScenario(minutes: number): Promise<LiveFigures> {
  const dataDir = mkdtempSync(path.join(root, 'live-'));
  // GNSS time starts now, so that receipt minus fix time is the delay a dispatcher sees.
  const drive = generateDrive({ minutes, hz: 10, seed: 7, startTimeMs: Date.now() + 2000 });
  const file = path.join(dataDir, 'drive.nmea');
  writeFileSync(file, drive.lines.map((l) => `${l}\r\n`).join(''));
  const rig = await platform();
  const config = agentConfig(rig, dataDir, { gnss: { replayFile: file, replaySpeed: 1 }, recording: { mode: 'all', minIntervalS: 0 } });
  const agent = new Agent({ config, logger, env: {}, shutdownGraceMs: 2000 });
  let maxPending = 0;
  await agent.start();
  const end = performance.now() + minutes * 60_000 + 5000;
  while (performance.now() < end) {
    const c = agent.counts();
    if (c && rig.upsertAnsweredAt !== undefined) maxPending = Math.max(maxPending, c.pending);
    await new Promise((r) => setTimeout(r, 500));
  }
  // The drive is over: what is still queued goes out, then every fix is checked.
  const settle = performance.now() + 60_000;
  while (performance.now() < settle && (agent.counts()?.pending ?? 1) > 0) await new Promise((r) => setTimeout(r, 200));
  const recorded = agent.counts()?.recorded ?? 0;
  await agent.stop();
  const delays = [...rig.sim.events.values()]
    .map((e) => (e.receivedAt - Date.parse(String(e.event.creationDate))) / 1000)
    .sort((a, b) => a - b);
  const q = (p: number) => delays[Math.min(delays.length - 1, Math.floor(p * delays.length))] ?? NaN;
  const figures = {
    minutes,
    recorded,
    delivered: rig.sim.events.size,
    duplicates: rig.sim.stats.duplicates,
    maxPending,
    delayP50S: q(0.5),
    delayP95S: q(0.95),
    delayMaxS: delays.at(-1) ?? NaN,
  };
  await rig.stop();
  return figures;
}

try {
  say(
    `bench:drain  one vehicle, TLS h2 through a relay adding ${RTT_MS} ms RTT, default configuration (upload.concurrency and latencyTargetMs defaults); ` +
      `simulator defaults: real-length tokens, echoed events, unlimited capacity; ${os.cpus().length} cores, load ${os.loadavg()[0]!.toFixed(1)}`,
  );
  const results: DrainFigures[] = [];
  if (HANDOVER) {
    const days = () => backlogFixes(7343, 3, 10);
    results.push(await drainScenario(`3 days, ${RTT_MS} ms`, days(), { live: true }));
    results.push(
      await drainScenario(`3 days, ${RTT_MS} -> ${RTT_TO_MS} ms`, days(), { live: true, rtt: { fromMs: RTT_MS, toMs: RTT_TO_MS } }),
    );
    results.push(
      await drainScenario(`3 days, ${RTT_TO_MS} -> ${RTT_MS} ms`, days(), { live: true, rtt: { fromMs: RTT_TO_MS, toMs: RTT_MS } }),
    );
  } else {
    results.push(await drainScenario('3 days x 10 h, path (default)', backlogFixes(7343, 3, 10)));
    say(`  done: ${results.at(-1)!.name}`);
    if (!ONLY) {
      results.push(await drainScenario('6 h of all at 1 Hz', backlogFixes(21_600, 1, 6)));
      say(`  done: ${results.at(-1)!.name}`);
    }
  }
  say('');
  say('backlog                          events  drained in   events/s  max window  limits seen              dup  KB up / down per event');
  for (const r of results)
    say(
      `${r.name.padEnd(31)}  ${String(r.events).padStart(6)}  ${r.drainS.toFixed(0).padStart(6)} s    ${r.ratePerS.toFixed(1).padStart(7)}  ${String(r.maxWindow).padStart(10)}  ${r.limits.join(',').padEnd(23)}  ${String(r.duplicates).padStart(3)}  ${(r.bytesUp / r.events / 1024).toFixed(2)} / ${(r.bytesDown / r.events / 1024).toFixed(2)}`,
    );
  say(
    `goal: each <= 600 s from the device upsert's answer; before the adaptive drain (0.1 event/s): 7,343 in about 20 h, 21,600 in about 59 h`,
  );
  if (HANDOVER) {
    const base = results[0]!.drainS;
    for (const r of results) {
      const l = r.live;
      say(
        `${r.name.padEnd(31)}  ${(r.drainS / base).toFixed(2)}x the constant round trip (goal <= 1.5x); live lane ${l?.count ?? 0} fixes, delay p50 ${l?.p50S.toFixed(2)} s, p95 ${l?.p95S.toFixed(2)} s, max ${l?.maxS.toFixed(2)} s`,
      );
    }
  }
  if (LIVE_MIN > 0 && !HANDOVER) {
    say('');
    const l = await liveScenario(LIVE_MIN);
    say(
      `10 Hz "all" live for ${l.minutes} min: recorded ${l.recorded}, delivered ${l.delivered} (lost ${Math.max(0, l.recorded - l.delivered)}, duplicates ${l.duplicates}); ` +
        `backlog at most ${l.maxPending} fixes while driving; live delay (receipt - GNSS time) p50 ${l.delayP50S.toFixed(2)} s, p95 ${l.delayP95S.toFixed(2)} s, max ${l.delayMaxS.toFixed(2)} s`,
    );
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
