import { Command, InvalidArgumentError } from 'commander';
import { numberIn } from './options.js';

interface DriveCliOptions {
  out: string;
  minutes: number;
  hz: number;
  seed: number;
  start?: string;
}

/** `telematics-agent drive --out FILE`: the synthetic receiver's drive as an NMEA log for replay. */
export function registerDriveCommand(program: Command): void {
  program
    .command('drive')
    .description(
      'Write a synthetic multi-GNSS drive (city streets, a depot stop, a highway) as an NMEA log, for gnss.replayFile, demos and tests.',
    )
    .requiredOption('-o, --out <file>', 'where to write the NMEA log')
    .option('-m, --minutes <n>', 'length of the drive in minutes', numberIn(0.5, 1440), 10)
    .option('--hz <n>', 'epochs per second (1-10)', numberIn(1, 10, true), 1)
    .option('--seed <n>', 'seed: the same seed gives the same bytes', numberIn(0, 2 ** 32 - 1, true), 1)
    .option('--start <iso>', 'GNSS time of the first epoch (ISO 8601, UTC); default 2026-11-22T08:00:00Z')
    .action(async (opts: DriveCliOptions) => {
      let startTimeMs: number | undefined;
      if (opts.start !== undefined) {
        startTimeMs = Date.parse(opts.start);
        if (!Number.isFinite(startTimeMs)) throw new InvalidArgumentError(`--start: "${opts.start}" is not an ISO 8601 time`);
      }
      const [{ writeFileAtomic }, { driveText, generateDrive }] = await Promise.all([
        import('../system/atomic-file.js'),
        import('../sim/receiver/index.js'),
      ]);
      const drive = generateDrive({
        minutes: opts.minutes,
        hz: opts.hz,
        seed: opts.seed,
        ...(startTimeMs !== undefined ? { startTimeMs } : {}),
      });
      writeFileAtomic(opts.out, driveText(drive));
      const spans = drive.phases.map((p) => `${p.phase} ${Math.round(p.to - p.from)} s`).join(', ');
      process.stdout.write(
        `wrote ${drive.epochs} epochs (${drive.lines.length} sentences, ${(drive.epochs / drive.hz / 60).toFixed(1)} min at ${drive.hz} Hz) to ${opts.out}\n  ${spans}\n`,
      );
    });
}
