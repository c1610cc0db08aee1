/**
 * `telematics-agent nmea decode [FILE]`: what the receiver said, one JSON object per epoch. No
 * quality gate or recording policy; dates as the receiver gives them unless `--rollover`.
 */
import { systemClock, type Clock } from '../system/clock.js';
import { createReadStream, fstatSync, openSync, closeSync } from 'node:fs';
import type { Command } from 'commander';
import { AgentError, EXIT_CONFIG } from '../errors.js';
import { decodeSummary } from '../gnss/decode-summary.js';
import { createDecoder } from '../gnss/decoder.js';
import type { Fix } from '../fix/fix.js';
import { correctWeekRollover } from '../gnss/rollover.js';

/** The documented output: these names, in this order, absent when unknown. */
export function fixToJson(fix: Fix): string {
  const out: Record<string, unknown> = { time: new Date(fix.time).toISOString(), mode: fix.mode };
  if (fix.lat !== undefined) out.lat = fix.lat;
  if (fix.lon !== undefined) out.lon = fix.lon;
  if (fix.altMSL !== undefined) out.altMSL = fix.altMSL;
  if (fix.speed !== undefined) out.speed = fix.speed;
  if (fix.track !== undefined) out.track = fix.track;
  if (fix.satellitesUsed !== undefined) out.satellitesUsed = fix.satellitesUsed;
  if (fix.hdop !== undefined) out.hdop = fix.hdop;
  return JSON.stringify(out);
}

export async function decodeStream(
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
  options: { rollover?: boolean; clock?: Pick<Clock, 'wallMs'> },
): Promise<ReturnType<typeof createDecoder>['counters']> {
  const clock = options.clock ?? systemClock;
  const decoder = createDecoder(options.rollover ? { correctTime: (t) => correctWeekRollover(t, { clock }) } : {});
  let pending = '';
  const write = (fixes: Fix[]): void => {
    for (const f of fixes) pending += `${fixToJson(f)}\n`;
  };
  // A reader that goes away (`nmea decode log | head`) ends the decoding quietly, as Unix tools do.
  let closed = false;
  const onError = (): void => {
    closed = true;
  };
  output.on('error', onError);
  for await (const chunk of input) {
    write(decoder.pushChunk(typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : (chunk as Buffer)));
    if (pending.length > 0 && !output.write(pending)) await new Promise((r) => (output.once('drain', r), output.once('error', r)));
    pending = '';
    if (closed) break;
  }
  write(decoder.flush());
  if (pending.length > 0 && !closed) output.write(pending);
  return decoder.counters;
}

/** The output fields and their units, for `--help` and the README. */
const FIELDS_HELP = `
Output: one JSON object per epoch, fields absent when the receiver did not say:
  time            GNSS time, ISO 8601 UTC (as the receiver dated it; --rollover corrects old GPS week rollovers)
  mode            fix mode: 1 no fix, 2 2D, 3 3D
  lat, lon        degrees (WGS 84), south and west negative
  altMSL          metres above mean sea level
  speed           metres per second (m/s) over ground
  track           degrees true (0 north, 90 east), course over ground
  satellitesUsed  satellites used in the fix
  hdop            horizontal dilution of precision
At the end, stderr says how many lines were read and, when no fix came out, why.`;

export function registerNmeaCommands(program: Command): void {
  const nmea = program.command('nmea').description('Work with NMEA 0183 logs.');
  nmea
    .command('decode')
    .argument('[file]', 'NMEA log; stdin when absent or "-"')
    .description(
      'Print one JSON object per epoch (time, mode, lat, lon, altMSL in m, speed in m/s, track in degrees, satellitesUsed, hdop), as the receiver said it.',
    )
    .addHelpText('after', FIELDS_HELP)
    .option('--stats', 'print the counters (lines, sentences by type, rejections, epochs) to stderr at the end')
    .option('--rollover', "apply the live agent's GPS week-rollover correction to dates")
    .action(async (file: string | undefined, opts: { stats?: boolean; rollover?: boolean }) => {
      const fromStdin = file === undefined || file === '-';
      if (fromStdin && process.stdin.isTTY === true)
        process.stderr.write('reading NMEA from standard input (end with Ctrl-D; give a FILE to decode a log)\n');
      const input = fromStdin ? process.stdin : openLog(file);
      if (typeof input === 'string') {
        process.stderr.write(`telematics-agent: nmea decode: ${input}\n`);
        process.exitCode = EXIT_CONFIG;
        return;
      }
      let counters: Awaited<ReturnType<typeof decodeStream>>;
      try {
        counters = await decodeStream(input, process.stdout, { rollover: opts.rollover === true });
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        throw new AgentError(
          'NMEA_INPUT_UNREADABLE',
          `nmea decode: cannot read ${fromStdin ? 'standard input' : file}: ${code ?? (e as Error).message}`,
          {
            class: 'transient',
            cause: e,
          },
        );
      }
      if (opts.stats) process.stderr.write(`${JSON.stringify(counters, null, 2)}\n`);
      process.stderr.write(`nmea decode: ${decodeSummary(counters)}\n`);
    });
}

/** Opens the log, or returns which file and why not (exit 2: the argument is wrong, nothing was decoded). */
function openLog(file: string): NodeJS.ReadableStream | string {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (code ?? String(e));
    return `cannot read ${file}: ${why}`;
  }
  if (fstatSync(fd).isDirectory()) {
    closeSync(fd);
    return `${file} is a directory, not an NMEA log`;
  }
  return createReadStream('', { fd });
}
