/**
 * bench:footprint's long read-only spell (`--held --drive-minutes 240 [--speed 30] [--every 30]
 * [--drain]`): the daemon on a read-only card with the platform down, its memory sampled by the
 * drive's own clock (the GNSS time of its last fix, from the status socket), so that a machine that
 * replays slower than asked still prints each simulated half hour, and says how far behind it is.
 *
 * Per sample: RSS and RssAnon (/proc/PID/status); the V8 heap after the last full collection
 * (`--trace-gc`'s Mark-Compact lines in the daemon's log) and its used size now; the ArrayBuffer
 * memory outside the heap (process.memoryUsage().arrayBuffers: Buffers' backing stores) from a
 * probe module the daemon imports (`memoryProbeArgs`), which writes memoryUsage() beside itself
 * every second; the fixes held and thinned. `--drain` then starts the platform again on the same
 * port and samples once nothing is held any more.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_DRIVE_START_MS } from '../src/sim/receiver/index.js';
import { requestSnapshot } from '../src/status/status-client.js';
import type { StatusSnapshot } from '../src/status/snapshot.js';

const MB = 1e6;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;

/** node's arguments that make the daemon write its memoryUsage() to `dir`/memory.json every second. */
export function memoryProbeArgs(dir: string): string[] {
  const probe = path.join(dir, 'memory-probe.mjs');
  writeFileSync(
    probe,
    "import { writeFileSync } from 'node:fs';\n" +
      "const out = new URL('./memory.json', import.meta.url);\n" +
      'setInterval(() => writeFileSync(out, JSON.stringify(process.memoryUsage())), 1000).unref();\n',
  );
  return ['--trace-gc', '--import', probe];
}

interface Probe {
  heapUsed: number;
  arrayBuffers: number;
  external: number;
}

function probe(dir: string): Probe | undefined {
  try {
    return JSON.parse(readFileSync(path.join(dir, 'memory.json'), 'utf8')) as Probe;
  } catch {
    return undefined;
  }
}

/** The heap after the newest Mark-Compact in the daemon's log (`... -> 16.9 (20.3) MB`), MB. */
function heapAfterFullGc(log: string): string {
  let last: string | undefined;
  for (const m of log.matchAll(/Mark-Compact(?: \(reduce\))? [\d.]+ \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB/g)) last = m[1];
  return last === undefined ? '? MB' : `${last} MB`;
}

export interface SpellOptions {
  pid: number;
  dir: string;
  socket: string;
  logFile: string;
  driveMinutes: number;
  everyMinutes: number;
  speed: number;
  procStatus(pid: number, key: 'VmRSS' | 'RssAnon'): number;
  say(s: string): void;
  /** Starts the platform again (the drain); undefined: no drain. */
  platformBack?: () => Promise<void>;
}

/** One line of figures: RSS, anon, heap after the last full GC and used now, ArrayBuffers, held, thinned. */
function sample(o: SpellOptions, label: string, s: StatusSnapshot | undefined, t0: number): void {
  const p = probe(o.dir);
  const wall = (performance.now() - t0) / 1000;
  o.say(
    `  ${label.padEnd(14)} wall ${wall.toFixed(0).padStart(4)} s: RSS ${mb(o.procStatus(o.pid, 'VmRSS'))}, anon ${mb(o.procStatus(o.pid, 'RssAnon'))}, ` +
      `heap after full GC ${heapAfterFullGc(readFileSync(o.logFile, 'utf8'))} (used ${p ? mb(p.heapUsed) : '?'}), ` +
      `ArrayBuffers ${p ? mb(p.arrayBuffers) : '?'}, held ${s?.disk.heldInMemory ?? 0}, thinned ${s?.outbox.thinned ?? '?'}`,
  );
}

/** Samples every `everyMinutes` of the drive until `driveMinutes` (or the replay's end), then the drain. */
export async function runSpell(o: SpellOptions): Promise<void> {
  const t0 = performance.now();
  o.say(
    `  read-only spell: ${o.driveMinutes} min of a 10 Hz drive replayed at ${o.speed}x (${((o.driveMinutes * 60) / o.speed).toFixed(0)} s of wall time if the daemon keeps up), platform down; a sample every ${o.everyMinutes} drive minutes`,
  );
  let next = o.everyMinutes;
  let last: StatusSnapshot | undefined;
  for (;;) {
    await sleep(500);
    const s = await requestSnapshot(o.socket, 5000).catch(() => undefined);
    if (!s) continue;
    last = s;
    const fixTime = s.receiver?.fixTime;
    const driveMin = fixTime === undefined ? 0 : (fixTime - DEFAULT_DRIVE_START_MS) / 60_000;
    const ended = s.receiver?.link === 'ended';
    if (driveMin >= next || ended) {
      const behind = ((performance.now() - t0) / 1000) * o.speed - driveMin * 60;
      sample(o, `${Math.floor(driveMin)} min`, s, t0);
      if (behind > 60) o.say(`    (the replay is ${(behind / 60).toFixed(1)} drive minutes behind ${o.speed}x)`);
      next += o.everyMinutes;
    }
    if (next > o.driveMinutes || ended) break;
  }
  if (!o.platformBack) return;
  const drainT0 = performance.now();
  await o.platformBack();
  for (;;) {
    await sleep(500);
    const s = await requestSnapshot(o.socket, 5000).catch(() => undefined);
    if (s) last = s;
    if (s && (s.disk.heldInMemory ?? 0) === 0 && s.outbox.pending === 0) break;
    if (performance.now() - drainT0 > 30 * 60_000) throw new Error('the drain did not end within 30 minutes');
  }
  // A few seconds for the drain's garbage to be collected, as a running daemon's would be.
  await sleep(10_000);
  sample(o, `drained`, last, t0);
  o.say(`    (drained in ${((performance.now() - drainT0) / 1000).toFixed(0)} s)`);
}
