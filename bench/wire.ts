/**
 * bench:wire (issue 16.6): what a vehicle's platform traffic costs on the SIM, measured over TLS
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
 */

import { rmSync } from 'node:fs';
import {
  DEFAULT_IDLE_S,
  DRIVE_MINUTES,
  DRIVE_SPEEDUP,
  HOURS_DRIVING_PER_MONTH,
  HOURS_PARKED_PER_MONTH,
  PARKED_SPEEDUP,
  type RunResult,
  SERVER_IDLE_S,
  type Scenario,
  config,
  handshakes,
  recordedDrive,
  replay,
  tmp,
} from './wire-rig.js';

// ---------------------------------------------------------------------------------------------

const kb = (n: number) => `${(n / 1000).toFixed(1)} KB`;
const mb = (n: number) => `${(n / 1e6).toFixed(2)} MB`;
const started = performance.now();
// undici unrefs idle h2 sessions and sockets, so between two scenarios (a dispatcher closing, the
// next simulator not yet listening) nothing may hold the event loop and node would exit early.
const holdLoop = setInterval(() => {}, 60_000);

console.log(`bench:wire — TLS with real sockets, bytes counted at the agent's TCP socket (IP/TCP headers not included)`);
const { fixes, hours, phases } = await recordedDrive();
console.log(
  `drive: synthetic, ${DRIVE_MINUTES} min (${phases}), ${fixes.length} events recorded at the default recording policy = ${(fixes.length / hours).toFixed(0)} per hour of driving`,
);
console.log(
  `replay: ${DRIVE_SPEEDUP}x (parked hour ${PARKED_SPEEDUP}x), connection timers scaled alike; server idle timeout ${SERVER_IDLE_S} s; agent idle ${DEFAULT_IDLE_S} s (after), 4 s (before)\n`,
);

const warm = { ...fixes[0]!, time: fixes[0]!.time - 60_000 };
const scenarios: Scenario[] = [
  { name: 'before: h1.1, today (h2 offered)', transport: 'before', server: 'h2', speedup: DRIVE_SPEEDUP },
  { name: 'after: h2', transport: 'after', server: 'h2', speedup: DRIVE_SPEEDUP },
  { name: 'after: server h1.1 only', transport: 'after', server: 'http/1.1', speedup: DRIVE_SPEEDUP },
];

interface Row {
  name: string;
  protocol: string;
  perEvent: { reqHead: number; reqBody: number; ansHead: number; ansBody: number; tls: number; up: number; down: number };
  hs: { full: number; resumed: number; resumedOk: boolean };
  drive: RunResult;
  parked: { best: RunResult; label: string; all: { label: string; r: RunResult }[] };
}
const rows: Row[] = [];

for (const s of scenarios.filter((x) => !process.env.WIRE_ONLY || x.transport === process.env.WIRE_ONLY)) {
  // Warm per-event bytes: 30 events one after the other on a warm connection.
  const seq = fixes.slice(1, 31).map((f, i) => ({ ...f, time: fixes[0]!.time + i * 200 }));
  const warmRun = await replay({ ...s, speedup: 1 }, seq, warm);
  const n = warmRun.events;
  const w = warmRun.wire;
  const perEvent = {
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
  // Parked hour: one heartbeat every recording.stoppedHeartbeatS.
  const beat = config.recording.stoppedHeartbeatS * 1000;
  const parkedFixes = Array.from({ length: Math.round(3_600_000 / beat) }, (_, i) => ({ ...fixes[0]!, time: fixes[0]!.time + i * beat }));
  const variants: { label: string; pingS?: number }[] =
    s.transport === 'before'
      ? [{ label: 'new connection per heartbeat' }]
      : [
          { label: 'reconnect, resumed TLS', pingS: 0 },
          { label: 'keep, h2 PING 45 s', pingS: 45 },
        ];
  const all: { label: string; r: RunResult }[] = [];
  for (const v of variants) {
    if (s.server === 'http/1.1' && (v.pingS ?? 0) > 0) continue; // PING is an h2 frame
    const r = await replay({ ...s, speedup: PARKED_SPEEDUP, ...(v.pingS !== undefined ? { pingS: v.pingS } : {}) }, parkedFixes, warm);
    all.push({ label: v.label, r });
  }
  const cost = (r: RunResult) => r.wire.total.sent + r.wire.total.received;
  const def =
    all.find((a) => s.transport === 'before' || a.label.startsWith(config.platform.pingIntervalS > 0 ? 'keep' : 'reconnect')) ?? all[0]!;
  rows.push({ name: s.name, protocol: drive.wire.protocol ?? '?', perEvent, hs, drive, parked: { best: def.r, label: def.label, all } });
  void cost;
}

const pad = (s: string, n: number) => s.padEnd(n);
const col = (v: string) => v.padStart(24);
const line = (label: string, f: (r: Row) => string) => console.log(`${pad(label, 44)}${rows.map((r) => col(f(r))).join('')}`);
line('figure', (r) => r.name.split(':')[0] + (r.name.includes('only') ? ' (h1.1 srv)' : ''));
line('protocol negotiated', (r) => r.protocol);
line('bytes per event, warm: request head', (r) => `${r.perEvent.reqHead.toFixed(0)} B`);
line('  request body', (r) => `${r.perEvent.reqBody.toFixed(0)} B`);
line('  answer head', (r) => `${r.perEvent.ansHead.toFixed(0)} B`);
line('  answer body', (r) => `${r.perEvent.ansBody.toFixed(0)} B`);
line('  TLS records', (r) => `${r.perEvent.tls.toFixed(0)} B`);
line(
  '  up + down at the socket (goal <= 800 B)',
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
const parkedHour = (r: Row) => r.parked.best.wire.total.sent + r.parked.best.wire.total.received;
line('parked hour (goal <= 10 KB)', (r) => kb(parkedHour(r)));
line(`  parked month (${HOURS_PARKED_PER_MONTH} h, on top)`, (r) => mb(parkedHour(r) * HOURS_PARKED_PER_MONTH));
console.log('\nparked hour, each way of spending it (12 heartbeats, server idle 60 s):');
for (const r of rows)
  for (const a of r.parked.all)
    console.log(
      `  ${pad(r.name, 36)} ${pad(a.label, 28)} ${kb(a.r.wire.total.sent + a.r.wire.total.received).padStart(9)}  connections ${a.r.wire.connections}, token refreshes ${a.r.refreshes}`,
    );
const before = rows[0]!;
const after = rows[1]!;
console.log(
  `\nafter/before: per event warm ${((after.perEvent.up + after.perEvent.down) / (before.perEvent.up + before.perEvent.down)).toFixed(2)}x, per driving hour ${(perHour(after) / perHour(before)).toFixed(2)}x, parked hour ${(parkedHour(after) / parkedHour(before)).toFixed(2)}x`,
);
console.log(`(${((performance.now() - started) / 1000).toFixed(0)} s)`);
rmSync(tmp, { recursive: true, force: true });
clearInterval(holdLoop);
