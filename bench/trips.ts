/**
 * bench:trips: a corpus of drives with their truth (bench/trips-corpus.ts), each run through the
 * daemon's trip detector, MotionTracker (src/motion/motion-tracker.ts), as the daemon runs it: every
 * accepted epoch of the NMEA, decoded and gated (gated-fixes.ts), the ignition changes at their
 * GNSS times, a sink that commits each event's state at once, and the state in a meta store that
 * survives a restart (a run that ends with SIGTERM detaches; a power cut just drops the tracker).
 *
 * Per drive one row: stops and starts expected / found / spurious, engine changes expected /
 * found, the worst dating error of the events found (seconds outside what the signal allows: the
 * true time where the fix was there, the gap's edge where it was not), the odometer's error (%
 * of the true distance on drives, metres per parked hour on parked drives), and PASS or FAIL
 * against the goals:
 *   - no spurious stop or start;
 *   - every stop of >= stopAfterS found, and every start after one that the agent saw;
 *   - dating within 5 s;
 *   - odometer within 1 % on drives, under 5 m per parked hour parked;
 *   - every engine change, once, dated within 5 s;
 *   - each event's odometer within 1 % (or 25 m) of the true distance driven up to its time.
 * A made event matches an expected one of its type within 30 s of the true time, or within 5 s of
 * its datable time (the gap's edge); made events left unmatched are spurious.
 * It prints FAIL rows, it does not throw: exit code 0. `--only NAME` runs one drive; `--verbose` lists each drive's
 * true stops, expected events and made events.
 */
import { CORPUS, STOP_AFTER_S } from './trips-corpus.js';
import { DATING_S, ODOMETER_PCT, PARKED_M_PER_H, evaluateDrive, type Row } from './trips-eval.js';

const only = (() => {
  const i = process.argv.indexOf('--only');
  return i >= 0 ? process.argv[i + 1] : undefined;
})();
const verbose = process.argv.includes('--verbose');
const entries = only === undefined ? CORPUS : CORPUS.filter((e) => e.name === only);
if (entries.length === 0) {
  console.error(`no drive named ${only ?? '(missing)'}; the drives: ${CORPUS.map((e) => e.name).join(', ')}`);
  process.exit(2);
}

const t0 = Date.now();
const rows: Row[] = entries.map((entry) => evaluateDrive(entry.build(), verbose));

console.log(
  `bench:trips: ${rows.length} drive${rows.length === 1 ? '' : 's'} through MotionTracker (stopAfterS ${STOP_AFTER_S}, departRadiusM 50, stillSpeedKmh 3), NMEA decoded and gated as the daemon does`,
);
console.log(
  `goals: 0 spurious stops/starts; every stop >= ${STOP_AFTER_S} s found; dating within ${DATING_S} s (the gap's edge where the fix was lost); odometer within ${ODOMETER_PCT} % (< ${PARKED_M_PER_H} m per parked hour); every engine change\n`,
);
const header = ['drive', 'Hz', 'min', 'stops e/f/s', 'starts e/f/s', 'engine e/f', 'dating s', 'odometer', 'result'];
const table = rows.map((r) => [
  r.name,
  String(r.hz),
  r.minutes.toFixed(1),
  r.stops.join('/'),
  r.starts.join('/'),
  r.engine.join('/'),
  r.datingS === undefined ? '-' : r.datingS.toFixed(1),
  r.odometer,
  r.pass ? 'PASS' : `FAIL: ${r.why.join('; ')}`,
]);
const widths = header.map((h, i) =>
  Math.max(h.length, i === 0 ? 'power-cut-disk-full'.length : 0, ...table.map((t) => (i === header.length - 1 ? 0 : t[i]!.length))),
);
const line = (cells: string[]): string =>
  cells.map((c, i) => (i === 0 || i === cells.length - 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
console.log(line(header).trimEnd());
for (const t of table) console.log(line(t).trimEnd());
if (only === undefined) console.log(`${'power-cut-disk-full'.padEnd(widths[0]!)}  see test/store (not in this bench)`);

const sum = (f: (r: Row) => number): number => rows.reduce((s, r) => s + f(r), 0);
const passed = rows.filter((r) => r.pass).length;
console.log(
  `\n${passed}/${rows.length} PASS; spurious stops ${sum((r) => r.stops[2])}, starts ${sum((r) => r.starts[2])}; stops found ${sum((r) => r.stops[1])}/${sum((r) => r.stops[0])}, starts ${sum((r) => r.starts[1])}/${sum((r) => r.starts[0])}; engine changes ${sum((r) => r.engine[1])}/${sum((r) => r.engine[0])} (${((Date.now() - t0) / 1000).toFixed(1)} s)`,
);
process.exitCode = 0;
