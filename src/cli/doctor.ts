import type { Command } from 'commander';
import { doctorExitCode, renderResults } from '../doctor/check.js';
import { runDoctor } from '../doctor/run-doctor.js';
import { useColor } from '../status/render.js';

/** `telematics-agent doctor`: the checks a technician would make, each with a one-line fix. */
export function registerDoctorCommand(program: Command): void {
  program
    .command('doctor')
    .description('Check configuration, password file, receiver, platform and disk; PASS / WARN / FAIL with a fix each. Exit 1 when anything failed.')
    .option('-c, --config <file>', 'configuration file')
    .action(async (opts: { config?: string }) => {
      const results = await runDoctor(opts.config);
      process.stdout.write(renderResults(results, useColor(process.stdout)));
      process.exitCode = doctorExitCode(results);
    });
}
