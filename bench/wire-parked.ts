/**
 * bench:wire, the parked hour on real terms: every hourly contact on a cold connection (the
 * server's idle timeout of 60 s closed the last one long before), the chain of a public CA in every
 * full handshake (makePublicLikeChain: leaf + two intermediates, RSA-2048), the token service's
 * real three-token answer, and a server that resumes no TLS session (the worst case), or one that
 * does (tickets good for a day). The daemon before (a heartbeat every 3600 s, the token renewed
 * ahead every hour) beside the daemon now (the configuration's defaults and build.ts's renewal).
 */
import type { RecordedFix } from '../src/fix/fix.js';
import type { TokenManagerTuning } from '../src/platform/auth/token-manager-options.js';
import { PARKED_SPEEDUP, rig, sleep } from './wire-rig.js';

export interface ParkedPlan {
  label: string;
  /** The heartbeat of a vehicle parked for hours (steady state). */
  heartbeatS: number;
  /** The first heartbeat of a parked spell (recording.stoppedHeartbeatS). */
  firstHeartbeatS: number;
  tokenIdle?: Pick<TokenManagerTuning, 'keepFreshS' | 'idleRefreshAgeS'>;
}

export interface ParkedRun {
  hours: number;
  bytes: number;
  heartbeats: number;
  refreshes: number;
  fullHandshakes: number;
  resumedHandshakes: number;
  handshakeBytes: number;
  /** Bytes of the token service's connections, handshakes included. */
  tokenBytes: number;
  eventBytes: number;
}

/** Agent seconds after the last heartbeat that belong to the window: the server's idle close (60 s) and the agent's. */
const TAIL_S = 120;

/**
 * `hours` parked, after a last event at 0 that fetched the token: heartbeats every heartbeatS, the
 * token manager doing as the plan says. Counts everything from just after that event to `hours`
 * (plus the closes of the last connections).
 */
export async function parkedOnRealTerms(plan: ParkedPlan, resumption: boolean, hours: number, fix: RecordedFix): Promise<ParkedRun> {
  const r = await rig({
    name: plan.label,
    transport: 'after',
    server: 'h2',
    speedup: PARKED_SPEEDUP,
    chain: 'public',
    resumption,
    ...(plan.tokenIdle ? { tokenIdle: plan.tokenIdle } : {}),
  });
  try {
    r.record(fix);
    await r.drained();
    const w0 = r.wire.snapshot();
    const refreshes0 = r.sim.stats.refreshes;
    const t0 = performance.now();
    const at = (agentS: number) => sleep(Math.max(0, (agentS * 1000) / PARKED_SPEEDUP - (performance.now() - t0)));
    const n = Math.floor((hours * 3600) / plan.heartbeatS);
    for (let k = 1; k <= n; k++) {
      await at(k * plan.heartbeatS);
      r.record({ ...fix, time: fix.time + k * plan.heartbeatS * 1000 });
      await r.drained();
    }
    await at(hours * 3600 + TAIL_S);
    const w = r.wire.snapshot();
    const origin = (auth: boolean) =>
      Object.entries(w.byOrigin)
        .filter(([k]) => k.includes('localhost') === auth)
        .reduce((t, [k, o]) => t + o.bytes - (w0.byOrigin[k]?.bytes ?? 0), 0);
    return {
      hours,
      bytes: w.total.sent + w.total.received - w0.total.sent - w0.total.received,
      heartbeats: n,
      refreshes: r.sim.stats.refreshes - refreshes0,
      fullHandshakes: w.fullHandshakes - w0.fullHandshakes,
      resumedHandshakes: w.resumedHandshakes - w0.resumedHandshakes,
      handshakeBytes: w.handshakeBytes.full + w.handshakeBytes.resumed - w0.handshakeBytes.full - w0.handshakeBytes.resumed,
      tokenBytes: origin(true),
      eventBytes: origin(false),
    };
  } finally {
    await r.close();
  }
}

/**
 * Wake-ups of a month's parked hours: 22 nights of 14 h and 4 weekends of the 202 h left (50.5 h
 * each), every spell with its first heartbeat at firstHeartbeatS and the rest every heartbeatS.
 */
export function parkedWakesPerMonth(plan: ParkedPlan): number {
  const spell = (h: number) => {
    const s = h * 3600;
    if (s < plan.firstHeartbeatS) return 0;
    return 1 + Math.floor((s - plan.firstHeartbeatS) / plan.heartbeatS);
  };
  return 22 * spell(14) + 4 * spell(50.5);
}

const kb = (n: number) => `${(n / 1000).toFixed(1)} KB`;

/** The before and now plans, side by side, without and with TLS resumption; prints what each assumes. */
export async function printParkedOnRealTerms(
  fix: RecordedFix,
  now: ParkedPlan,
  before: ParkedPlan,
  hoursParkedPerMonth: number,
): Promise<{ before: ParkedRun; now: ParkedRun; monthBefore: number; monthNow: number }> {
  // A whole number of both plans' heartbeats (the first heartbeat of a spell is left out: steady state).
  const hours = Number(process.env.WIRE_REAL_HOURS ?? Math.max(6, (2 * Math.max(now.heartbeatS, before.heartbeatS)) / 3600));
  console.log(
    `\nparked hour on real terms (${hours} h parked at ${PARKED_SPEEDUP}x after a last event that fetched the token; per hour): every contact on a`,
  );
  console.log(
    '  cold connection (server idle timeout 60 s), the server sending leaf + two intermediates (RSA-2048, as a public CA serves),',
  );
  console.log('  the token service on its own origin answering every refresh with all three tokens of the real length (~3.3 KB of JSON),');
  console.log('  every event echoed; "no resumption": the server resumes no TLS session; "resumption": tickets good for a day');
  const runs: Record<string, ParkedRun> = {};
  for (const resumption of [false, true])
    for (const [name, plan] of [
      ['before', before],
      ['now', now],
    ] as const)
      runs[`${name} ${resumption}`] = await parkedOnRealTerms(plan, resumption, hours, fix);
  const pad = (s: string, n: number) => s.padEnd(n);
  const head = ['before, no resumption', 'now, no resumption', 'before, resumption', 'now, resumption'];
  const order = ['before false', 'now false', 'before true', 'now true'];
  const line = (label: string, f: (r: ParkedRun, plan: ParkedPlan) => string) =>
    console.log(`  ${pad(label, 40)}${order.map((k) => f(runs[k]!, k.startsWith('before') ? before : now).padStart(26)).join('')}`);
  line('', (_r, _p) => '');
  console.log(`  ${pad('figure', 40)}${head.map((h) => h.padStart(26)).join('')}`);
  line('plan', (_r, p) => p.label);
  line('parked hour (goal <= 10 KB)', (r) => kb(r.bytes / r.hours));
  line('  heartbeats / token refreshes', (r) => `${r.heartbeats} / ${r.refreshes} in ${r.hours} h`);
  line('  TLS handshakes (full + resumed)', (r) => `${r.fullHandshakes} + ${r.resumedHandshakes}`);
  line('  of it handshakes', (r) => kb(r.handshakeBytes / r.hours));
  line('  of it token service (incl. handshakes)', (r) => kb(r.tokenBytes / r.hours));
  line('  of it events (incl. handshakes)', (r) => kb(r.eventBytes / r.hours));
  line('per wake-up (heartbeat + refresh)', (r) => kb(r.bytes / Math.max(1, r.heartbeats)));
  line(`parked month (${hoursParkedPerMonth} h), wake-ups`, (_r, p) => `${parkedWakesPerMonth(p)}`);
  line('parked month, MB', (r, p) => `${((parkedWakesPerMonth(p) * r.bytes) / Math.max(1, r.heartbeats) / 1e6).toFixed(2)} MB`);
  console.log(
    `  (month: ${hoursParkedPerMonth} parked h as 22 nights of 14 h and 4 weekends of 50.5 h; a spell's first heartbeat after ${now.firstHeartbeatS} s, then its plan's; each wake-up at the cost above)`,
  );
  const month = (r: ParkedRun, p: ParkedPlan) => (parkedWakesPerMonth(p) * r.bytes) / Math.max(1, r.heartbeats);
  const b = runs['before false']!;
  const n = runs['now false']!;
  return { before: b, now: n, monthBefore: month(b, before), monthNow: month(n, now) };
}
