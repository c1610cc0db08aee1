/**
 * `telematics-agent nmea decode [FILE]`: what the receiver said, one JSON object per epoch. No
 * quality gate or recording policy; dates as the receiver gives them unless `--rollover`.
 */
import { createReadStream } from 'node:fs';
import type { Command } from 'commander';
import { createDecoder } from '../gnss/decoder.js';
import type { Fix } from '../gnss/fix.js';
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
  options: { rollover?: boolean },
): Promise<ReturnType<typeof createDecoder>['counters']> {
  const decoder = createDecoder(options.rollover ? { correctTime: (t) => correctWeekRollover(t) } : {});
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

export function registerNmeaCommands(program: Command): void {
  const nmea = program.command('nmea').description('Work with NMEA 0183 logs.');
  nmea
    .command('decode')
    .argument('[file]', 'NMEA log; stdin when absent or "-"')
    .description(
      'Print one JSON object per epoch (time, mode, lat, lon, altMSL, speed, track, satellitesUsed, hdop), as the receiver said it.',
    )
    .option('--stats', 'print the counters (lines, sentences by type, rejections, epochs) to stderr at the end')
    .option('--rollover', "apply the live agent's GPS week-rollover correction to dates")
    .action(async (file: string | undefined, opts: { stats?: boolean; rollover?: boolean }) => {
      const input = file === undefined || file === '-' ? process.stdin : createReadStream(file);
      const counters = await decodeStream(input, process.stdout, { rollover: opts.rollover === true });
      if (opts.stats) process.stderr.write(`${JSON.stringify(counters, null, 2)}\n`);
    });
}
