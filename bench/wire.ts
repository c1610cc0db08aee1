/**
 * bench:wire: what a vehicle's platform traffic costs on the SIM, measured over TLS
 * with real sockets and counted at the agent's TCP socket (handshakes, TLS records, h2 frames
 * included; IP/TCP headers are not visible to a process and not counted).
 *
 * - The platform simulator behind TLS (a throwaway CA, trusted through platform.caFile) offering
 *   h2 + HTTP/1.1 in ALPN, or HTTP/1.1 only; idle connections closed by the server after 60 s (an
 *   AWS ALB's default).
 * - The agent's real parts: outbox (SQLite), uploader, token manager, requester, dispatcher.
 * - A synthetic drive (`telematics-agent drive`: city, depot stop, highway) through the real GNSS
 *   pipeline and recording policy at the configuration defaults (whatever main has), then replayed
 *   into the outbox at its GNSS times, accelerated. Every timer that decides a connection's life is
 *   scaled by the same factor ("the agent's timers honest"): the agent's idle timeout and pings,
 *   the server's idle timeout, the commit interval and the access token lifetime.
 * - Before: HTTP/1.1 with today's transport settings (undici Agent, 4 s idle, no h2), as a baseline
 *   in the same process. After: the platform dispatcher at its defaults.
 * - The parked hour on real terms (wire-parked.ts): cold connections, a public CA's chain, the
 *   three-token refresh, with and without TLS resumption; the daemon before and now side by side.
 */

import { rmSync } from 'node:fs';
import { restartCost } from './wire-restart.js';
import { printParkedOnRealTerms, type ParkedPlan } from './wire-parked.js';
import { TOKEN_IDLE_REFRESH_AGE_S, TOKEN_KEEP_FRESH_S } from '../src/platform/auth/renewal-timing.js';
import type { RecordedFix } from '../src/fix/fix.js';
import { PING_INTERVAL_S } from '../src/platform/transport/dispatcher.js';
import {
  DEFAULT_IDLE_S,
  DRIVE_MINUTES,
  DRIVE_SPEEDUP,
  HOURS_DRIVING_PER_MONTH,
  HOURS_PARKED_PER_MONTH,
  PARKED_SPEEDUP,
  type RunResult,
  TICKET_LIFETIME_S,
  SERVER_IDLE_S,
  type Scenario,
  ca,
  config,
  handshakes,
  recordedDrive,
  refreshCost,
  replay,
  tmp,
} from './wire-rig.js';

// ---------------------------------------------------------------------------------------------

const kb = (n: number) => `${(n / 1000).toFixed(1)} KB`;
const mb = (n: number) => `${(n / 1e6).toFixed(2)} MB`;
const started = performance.now();
/** Parked hours replayed per variant (their figures are per hour). */
const PARKED_HOURS = Number(process.env.WIRE_PARKED_HOURS ?? 2);
/** The earlier parked heartbeat (recording.stoppedHeartbeatS was 300). */
const BEFORE_HEARTBEAT_S = 300;
// undici unrefs idle h2 sessions and sockets, so between two scenarios (a dispatcher closing, the
// next simulator not yet listening) nothing may hold the event loop and node would exit early.
const holdLoop = setInterval(() => {}, 60_000);

console.log(`bench:wire — TLS with real sockets, bytes counted at the agent's TCP socket (IP/TCP headers not included)`);
const { fixes, hours, phases, what } = await recordedDrive();
console.log(
  `drive: ${what} (${phases}); ${fixes.length} events recorded at the default recording policy = ${(fixes.length / hours).toFixed(0)} per hour of driving`,
);
console.log(
  'platform: tokens of the real length (RS256 Keycloak-shaped, ~1,300 characters), every event echoed in a 200 (Prefer: return=minimal not honoured)',
);
console.log(
  `replay: ${DRIVE_SPEEDUP}x (parked hour ${PARKED_SPEEDUP}x), connection timers scaled alike; server idle timeout ${SERVER_IDLE_S} s; agent idle ${DEFAULT_IDLE_S} s (after), 4 s (before)\n`,
);

const warm = { ...fixes[0]!, time: fixes[0]!.time - 60_000 };

/** The parked vehicle as the daemon is now (configuration defaults, build.ts's token renewal) and as it was. */
const parkedNow: ParkedPlan = {
  label: `hb ${Math.max(config.recording.stoppedHeartbeatS, config.recording.parkedHeartbeatS)} s, token at hb`,
  heartbeatS: Math.max(config.recording.stoppedHeartbeatS, config.recording.parkedHeartbeatS),
  firstHeartbeatS: config.recording.stoppedHeartbeatS,
  tokenIdle: { keepFreshS: TOKEN_KEEP_FRESH_S, idleRefreshAgeS: TOKEN_IDLE_REFRESH_AGE_S },
};
const parkedBefore: ParkedPlan = { label: 'hb 3600 s, token ahead', heartbeatS: 3600, firstHeartbeatS: 3600 };
const parkedReal = () => printParkedOnRealTerms(warm, parkedNow, parkedBefore, HOURS_PARKED_PER_MONTH);
if (process.env.WIRE_REAL_ONLY === '1') {
  await parkedReal();
  rmSync(tmp, { recursive: true, force: true });
  clearInterval(holdLoop);
  process.exit(0);
}
const scenarios: Scenario[] = [
  { name: 'before: h2, bearer not indexed', transport: 'after', server: 'h2', speedup: DRIVE_SPEEDUP, indexAuthorization: false },
  { name: 'after: h2', transport: 'after', server: 'h2', speedup: DRIVE_SPEEDUP },
  { name: 'after: server h1.1 only', transport: 'after', server: 'http/1.1', speedup: DRIVE_SPEEDUP },
];

interface Row {
  name: string;
  protocol: string;
  perEvent: {
    bearer: number;
    block: number;
    reqHead: number;
    reqBody: number;
    ansHead: number;
    ansBody: number;
    tls: number;
    up: number;
    down: number;
  };
  hs: { full: number; resumed: number; resumedOk: boolean };
  drive: RunResult;
  /** best: the configuration's defaults (the first variant). */
  parked: { best: Parked; all: Parked[] };
}

interface ParkedVariant {
  label: string;
  heartbeatS: number;
  pingS?: number;
  ticketLifetimeS?: number;
  refresh?: 'background' | 'demand';
}
type Parked = ParkedVariant & { r: RunResult };

/** Heartbeats every `heartbeatS` for PARKED_HOURS hours (the gap after the last one included by replay). */
function parkedFixes(heartbeatS: number): RecordedFix[] {
  const n = Math.round((PARKED_HOURS * 3600) / heartbeatS);
  return Array.from({ length: n }, (_, i) => ({ ...fixes[0]!, time: fixes[0]!.time + i * heartbeatS * 1000 }));
}

/** The ways of spending a parked hour; the first is what the daemon does (configuration defaults, PING_INTERVAL_S). */
function parkedVariants(s: Scenario): ParkedVariant[] {
  const hb = config.recording.stoppedHeartbeatS;
  const ping = PING_INTERVAL_S;
  const how = (pingS: number) => (pingS > 0 ? `keep, h2 PING ${pingS} s` : 'reconnect, resumed TLS');
  if (s.transport === 'before') return [{ label: 'new connection per heartbeat', heartbeatS: BEFORE_HEARTBEAT_S }];
  // A parked spell's first hour (recording.stoppedHeartbeatS), the token renewed ahead: the parked
  // hour as the daemon spent it before recording.parkedHeartbeatS (now: the real-terms section).
  const defaults: ParkedVariant = { label: `heartbeat ${hb} s, ${how(ping)}, token ahead`, heartbeatS: hb, pingS: ping };
  // Earlier the parked heartbeat came every 1800 s.
  if (s.indexAuthorization === false) return [{ label: 'heartbeat 1800 s, reconnect, resumed TLS', heartbeatS: 1800, pingS: 0 }];
  if (s.server !== 'h2' || process.env.WIRE_PARKED_TABLE !== '1') return [defaults];
  const table: ParkedVariant[] = [];
  for (const heartbeatS of [300, 600, 900, 1200, 1800, 3600])
    for (const pingS of heartbeatS === 300 || heartbeatS === 1800 ? [0, 45] : [0])
      if (heartbeatS !== hb || pingS !== ping) table.push({ label: `heartbeat ${heartbeatS} s, ${how(pingS)}`, heartbeatS, pingS });
  return [
    defaults,
    ...table,
    { label: `heartbeat ${hb} s, token refreshed on demand only`, heartbeatS: hb, pingS: ping, refresh: 'demand' },
    { label: `heartbeat ${hb} s, server tickets live 300 s`, heartbeatS: hb, pingS: ping, ticketLifetimeS: 300 },
  ];
}
const rows: Row[] = [];

for (const s of scenarios.filter((x) => !process.env.WIRE_ONLY || x.transport === process.env.WIRE_ONLY)) {
  // Warm per-event bytes: 30 events one after the other on a warm connection.
  const seq = fixes.slice(1, 31).map((f, i) => ({ ...f, time: fixes[0]!.time + i * 200 }));
  const warmRun = await replay({ ...s, speedup: 1 }, seq, warm);
  const n = warmRun.events;
  const w = warmRun.wire;
  const perEvent = {
    bearer: bearerBytes(s, warmRun),
    block: (w.headerBlocks.count > 0 ? w.headerBlocks.sentBytes : 0) / n,
    reqBody: warmRun.reqBody / n,
    reqHead: (w.plaintext.sent - warmRun.reqBody) / n,
    ansBody: warmRun.ansBody / n,
    ansHead: (w.plaintext.received - warmRun.ansBody) / n,
    tls: (w.total.sent - w.plaintext.sent + w.total.received - w.plaintext.received) / n,
    up: w.total.sent / n,
    down: w.total.received / n,
  };
  const hs = await handshakes(s.server, s.transport);
  const drive = await replay(s, fixes, warm);
  const all: Parked[] = [];
  for (const v of parkedVariants(s)) {
    if (s.server === 'http/1.1' && (v.pingS ?? 0) > 0) continue; // PING is an h2 frame
    const { label, heartbeatS, ...rest } = v;
    const r = await replay({ ...s, speedup: PARKED_SPEEDUP, ...rest }, parkedFixes(heartbeatS), warm);
    all.push({ label, heartbeatS, r, ...rest });
  }
  rows.push({ name: s.name, protocol: drive.wire.protocol ?? '?', perEvent, hs, drive, parked: { best: all[0]!, all } });
}

const pad = (s: string, n: number) => s.padEnd(n);
const col = (v: string) => v.padStart(24);
const line = (label: string, f: (r: Row) => string) => console.log(`${pad(label, 44)}${rows.map((r) => col(f(r))).join('')}`);
line('figure', (r) => r.name.split(':')[0] + (r.name.includes('only') ? ' (h1.1 srv)' : ''));
line('protocol negotiated', (r) => r.protocol);
line('bytes per event, warm: request head', (r) => `${r.perEvent.reqHead.toFixed(0)} B`);
line('  of it the bearer (authorization)', (r) => `${r.perEvent.bearer.toFixed(0)} B`);
line('  of it other headers', (r) => (r.perEvent.block > 0 ? `${Math.max(0, r.perEvent.block - r.perEvent.bearer).toFixed(0)} B` : '-'));
line('  of it framing (h2 frames, h1.1 lines)', (r) =>
  r.perEvent.block > 0 ? `${(r.perEvent.reqHead - r.perEvent.block).toFixed(0)} B` : '-',
);
line('  request body', (r) => `${r.perEvent.reqBody.toFixed(0)} B`);
line('  answer head', (r) => `${r.perEvent.ansHead.toFixed(0)} B`);
line('  answer body', (r) => `${r.perEvent.ansBody.toFixed(0)} B`);
line('  TLS records', (r) => `${r.perEvent.tls.toFixed(0)} B`);
line(
  '  up + down at the socket (goal <= 900 B)',
  (r) => `${r.perEvent.up.toFixed(0)} + ${r.perEvent.down.toFixed(0)} = ${(r.perEvent.up + r.perEvent.down).toFixed(0)} B`,
);
line('full TLS handshake (tickets, close incl.)', (r) => `${r.hs.full} B`);
line('resumed TLS handshake', (r) => `${r.hs.resumed} B${r.hs.resumedOk ? '' : ' (not resumed)'}`);
line('drive: connections opened', (r) => `${r.drive.wire.connections} (${r.drive.wire.resumedHandshakes} resumed)`);
line('drive: events per hour of driving', (r) => `${(r.drive.events / hours).toFixed(0)}`);
line('drive: token refreshes', (r) => `${r.drive.refreshes}`);
line(
  'drive: bytes per event (all in)',
  (r) => `${((r.drive.wire.total.sent + r.drive.wire.total.received) / r.drive.events).toFixed(0)} B`,
);
const perHour = (r: Row) => (r.drive.wire.total.sent + r.drive.wire.total.received) / hours;
line('MB per hour of driving', (r) => mb(perHour(r)));
line(`month driving (10 h x 22 d; goal <= 50 MB)`, (r) => mb(perHour(r) * HOURS_DRIVING_PER_MONTH));
const bytesOf = (r: RunResult) => r.wire.total.sent + r.wire.total.received;
const parkedHour = (r: Row) => bytesOf(r.parked.best.r) / PARKED_HOURS;
const resumption = (r: RunResult) => `${r.wire.resumedHandshakes} of ${r.wire.resumedHandshakes + r.wire.fullHandshakes} resumed`;
line('parked hour, kind terms, hb 3600 s', (r) => kb(parkedHour(r)));
line(`  parked month (${HOURS_PARKED_PER_MONTH} h, on top)`, (r) => mb(parkedHour(r) * HOURS_PARKED_PER_MONTH));
line(`month, driving + parked (730 h)`, (r) => mb(perHour(r) * HOURS_DRIVING_PER_MONTH + parkedHour(r) * HOURS_PARKED_PER_MONTH));
line('TLS handshakes, drive', (r) => resumption(r.drive));
line('TLS handshakes, parked (kind terms)', (r) => resumption(r.parked.best.r));
console.log(
  `\nparked hour, where the bytes go (${PARKED_HOURS} h at ${PARKED_SPEEDUP}x, per hour; server idle ${SERVER_IDLE_S} s, PINGs do not reset it, as on an AWS ALB;`,
);
console.log(`server tickets live ${TICKET_LIFETIME_S} s unless stated; token service on its own origin, access token 3600 s):`);
console.log(
  `  ${pad('transport', 26)} ${pad('way', 58)} ${'total'.padStart(8)} ${'handshakes (full+resumed)'.padStart(32)} ${'token svc'.padStart(10)} ${'events'.padStart(18)}`,
);
for (const r of rows)
  for (const a of r.parked.all) {
    const w = a.r.wire;
    const per = (n: number) => n / PARKED_HOURS;
    const origins = Object.entries(w.byOrigin);
    const auth = origins.filter(([k]) => k.includes('localhost')).reduce((t, [, o]) => t + o.bytes - o.handshakeBytes, 0);
    const rest = origins.filter(([k]) => !k.includes('localhost')).reduce((t, [, o]) => t + o.bytes - o.handshakeBytes, 0);
    const hsBytes = w.handshakeBytes.full + w.handshakeBytes.resumed;
    const cell = (v: string, n: number) => v.padStart(n);
    console.log(
      `  ${pad(r.name.split(':')[0] + (r.name.includes('only') ? ' (h1.1)' : ''), 26)} ${pad(a.label, 58)} ${kb(per(bytesOf(a.r))).padStart(8)} ${cell(`${kb(per(hsBytes))} (${per(w.fullHandshakes)}+${per(w.resumedHandshakes)})`, 32)} ${cell(`${kb(per(auth))} (${per(a.r.refreshes)})`, 10)} ${cell(`${kb(per(rest))} (${per(a.r.events)})`, 18)}`,
    );
  }
console.log('  (handshakes: bytes both ways to the end of each handshake; token svc and events: the rest of those connections,');
console.log('   requests, answers, tickets, h2 set-up, PINGs, close; in brackets per hour: handshakes, refreshes, events)');
const refresh = await refreshCost();
console.log(
  `\ntoken refresh (three tokens down, one up; token service on its own origin): ${kb(refresh.warm)} on a warm connection, ${kb(refresh.resumed)} with a resumed TLS handshake (the usual case: the token origin is asked once an hour), ${kb(refresh.full)} with a full one; of it the form up ${refresh.up.body} B, the answer's JSON down ${refresh.down.body} B`,
);
const restart = await restartCost(ca, tmp);
const rs = (x: typeof restart.withTickets) => `${x.bytes} B (${x.full} full, ${x.resumed} resumed)`;
console.log(
  `\nrestart, handshakes of the first connections to ${restart.origins} origins: without saved tickets ${rs(restart.withoutTickets)}, with the tickets the previous run saved ${rs(restart.withTickets)}`,
);
const real = await parkedReal();
const before = rows[0]!;
const after = rows[1]!;
console.log(
  `\nafter/before: per event warm ${((after.perEvent.up + after.perEvent.down) / (before.perEvent.up + before.perEvent.down)).toFixed(2)}x, per driving hour ${(perHour(after) / perHour(before)).toFixed(2)}x, parked hour ${(parkedHour(after) / parkedHour(before)).toFixed(2)}x (before: h2 without the header indexer, parked heartbeat 1800 s)`,
);
console.log(
  `parked hour on real terms, before -> now: ${kb(real.before.bytes / real.before.hours)} -> ${kb(real.now.bytes / real.now.hours)} (no TLS resumption; before: heartbeat 3600 s and the token renewed ahead every hour)`,
);
console.log(
  `month, ${HOURS_DRIVING_PER_MONTH} driving h (h2) + ${HOURS_PARKED_PER_MONTH} parked h on real terms, before -> now: ${mb(perHour(after) * HOURS_DRIVING_PER_MONTH + real.monthBefore)} -> ${mb(perHour(after) * HOURS_DRIVING_PER_MONTH + real.monthNow)}`,
);
console.log(`(${((performance.now() - started) / 1000).toFixed(0)} s)`);
rmSync(tmp, { recursive: true, force: true });
clearInterval(holdLoop);

/**
 * The bearer's bytes in one warm request's head. h2 without the indexer: nghttp2's never-indexed
 * literal (name index 23 in two octets, a three-octet length, the value Huffman-coded); with it:
 * one octet, an index into the dynamic table. HTTP/1.1: the header line in full.
 */
function bearerBytes(s: Scenario, run: RunResult): number {
  if (s.server === 'http/1.1') return 'authorization: Bearer '.length + run.accessTokenLength + 2;
  if (s.indexAuthorization !== false) return 1;
  return 2 + 3 + run.bearerHuffmanBytes;
}
