/**
 * bench:health: the jamming rule (src/gnss/health/jamming.ts) on the synthetic receiver's drives,
 * so that the figures in docs/decisions/receiver-health.md can be produced again by anyone. Each
 * drive is generated with the simulator's impairments (src/sim/receiver/impairments.ts), its NMEA
 * run through the real decoder into ReceiverHealth as the daemon feeds it, and the state read after
 * every epoch.
 *
 * Two tables:
 *   - drives without interference (tunnel, street canyon, car park, slow fade; an open antenna):
 *     false alarms, i.e. onsets of "jamming suspected", and the seconds spent suspected;
 *   - interference of each level on one seed: detected or not, seconds from its start to the first
 *     epoch suspected, seconds from its end to the first epoch no longer suspected, and any onset
 *     outside it (a false alarm too).
 * It prints figures, it does not assert: exit code 0.
 */
import { createDecoder } from '../src/gnss/decoder.js';
import { JAMMING_RULE } from '../src/gnss/health/jamming.js';
import { ReceiverHealth } from '../src/gnss/health/receiver-health.js';
import { generateDrive, type DriveOptions } from '../src/sim/receiver/index.js';

const COVER_MINUTES = 12;
const COVER_SEEDS = [1, 2, 3, 4, 5, 6];
const COVER: NonNullable<DriveOptions['impairments']> = [
  { kind: 'tunnel', fromS: 60, toS: 120 },
  { kind: 'canyon', fromS: 160, toS: 260, streetHeading: 90 },
  { kind: 'car park', fromS: 300, toS: 500 },
  { kind: 'fade', fromS: 560, toS: 620 },
];
const OPEN_ANTENNA: DriveOptions = { minutes: 3, seed: 4, antenna: [{ atS: 60, state: 'OPEN' }] };
const JAM_SEED = 7;
// The same length as the cover drives: the route (and so the sky) depends on the length, and 6 dB,
// at the rule's median-fall threshold, is detected on seed 7's 12-minute drive but not its shorter ones.
const JAM_MINUTES = 12;
const JAM_FROM_S = 120;
const JAM_TO_S = 300;
const JAM_DB = [6, 8, 10, 15, 20, 30, 40];

/** Seconds since the drive's start and whether jamming was suspected, one per epoch. */
function suspicion(options: DriveOptions): { t: number; suspected: boolean }[] {
  const health = new ReceiverHealth();
  const drive = generateDrive(options);
  const out: { t: number; suspected: boolean }[] = [];
  const decoder = createDecoder({
    sky: true,
    onText: (text) => health.text(text),
    onFix: (fix) => {
      health.epoch(fix.time, decoder.satellites());
      out.push({ t: (fix.time - drive.startTimeMs) / 1000, suspected: health.state().jamming.state === 'suspected' });
    },
  });
  for (const line of drive.lines) decoder.push(line);
  decoder.flush();
  return out;
}

/** The times at which "suspected" begins. */
function onsets(seen: { t: number; suspected: boolean }[]): number[] {
  return seen.filter((s, i) => s.suspected && !(seen[i - 1]?.suspected ?? false)).map((s) => s.t);
}

function table(header: string[], rows: (string | number)[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells: (string | number)[]) =>
    cells
      .map((c, i) => String(c).padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) console.log(line(r));
}

const started = Date.now();
console.log('bench:health: jamming suspected from C/N0, on the synthetic receiver (src/sim/receiver), 1 Hz,');
console.log('through the real NMEA decoder into ReceiverHealth. The sky and its impairments are models:');
console.log('cover by elevation and azimuth, interference uniform over every satellite.');
console.log(`Rule: JAMMING_RULE in src/gnss/health/jamming.ts ${JSON.stringify(JAMMING_RULE)}`);
console.log('');
console.log(`Drives without interference: seeds ${COVER_SEEDS.join(', ')}, ${COVER_MINUTES} min each, with`);
console.log(`  ${COVER.map((i) => `${i.kind} ${i.fromS}-${i.toS} s`).join(', ')};`);
console.log(`  and an open antenna: seed ${OPEN_ANTENNA.seed}, ${OPEN_ANTENNA.minutes} min, OPEN from 60 s to the end.`);
console.log('');

const coverRows: (string | number)[][] = [];
let falseAlarms = 0;
for (const seed of COVER_SEEDS) {
  const seen = suspicion({ minutes: COVER_MINUTES, seed, impairments: COVER });
  const n = onsets(seen).length;
  falseAlarms += n;
  coverRows.push([`seed ${seed}: cover`, seen.length, n, seen.filter((s) => s.suspected).length]);
}
{
  const seen = suspicion(OPEN_ANTENNA);
  const n = onsets(seen).length;
  falseAlarms += n;
  coverRows.push([`seed ${OPEN_ANTENNA.seed}: open antenna`, seen.length, n, seen.filter((s) => s.suspected).length]);
}
table(['drive', 'epochs', 'false alarms', 's suspected'], coverRows);
console.log('');

console.log(`Interference: seed ${JAM_SEED}, ${JAM_MINUTES} min, every signal lower by the level from ${JAM_FROM_S} to ${JAM_TO_S} s`);
console.log('(reached within 1 s). Detect: s from its start to the first epoch suspected; clear: s from its end');
console.log('to the first epoch no longer suspected after that.');
console.log('');
const jamRows: (string | number)[][] = [];
let detected = 0;
let jamFalse = 0;
for (const db of JAM_DB) {
  const seen = suspicion({
    minutes: JAM_MINUTES,
    seed: JAM_SEED,
    impairments: [{ kind: 'interference', fromS: JAM_FROM_S, toS: JAM_TO_S, db }],
  });
  const first = seen.find((s) => s.suspected && s.t >= JAM_FROM_S && s.t <= JAM_TO_S);
  const cleared = first === undefined ? undefined : seen.find((s) => s.t > first.t && !s.suspected);
  // An onset before the jammer or after the state cleared is a false alarm, as on the cover drives.
  const outside = onsets(seen).filter((t) => t < JAM_FROM_S || (cleared !== undefined && t > cleared.t)).length;
  jamFalse += outside;
  if (first !== undefined) detected++;
  jamRows.push([
    `${db} dB`,
    first === undefined ? 'no' : 'yes',
    first === undefined ? '-' : first.t - JAM_FROM_S,
    cleared === undefined ? '-' : cleared.t - JAM_TO_S,
    outside,
  ]);
}
table(['level', 'detected', 'detect s', 'clear s', 'false alarms'], jamRows);
console.log('');
console.log(
  `Totals: false alarms ${falseAlarms} on ${coverRows.length} drives without interference, ${jamFalse} outside the interference;`,
);
console.log(`detected ${detected} of ${JAM_DB.length} levels (${JAM_DB.join(', ')} dB). ${((Date.now() - started) / 1000).toFixed(1)} s.`);
