import type { Command } from 'commander';
import { CONFIG_OPTION } from './options.js';

/** `telematics-agent doctor`: the checks a technician would make, each with a one-line fix. */
export function registerDoctorCommand(program: Command): void {
  program
    .command('doctor')
    .description(
      'Check configuration, password file, receiver, platform and disk; PASS / WARN / FAIL with a fix each. Exit 1 when anything failed.',
    )
    .option(...CONFIG_OPTION)
    .action(async (opts: { config?: string }) => {
      const [{ doctorExitCode, renderResults }, { runDoctor }, { useColor }] = await Promise.all([
        import('../doctor/check.js'),
        import('../doctor/run-doctor.js'),
        import('../status/render.js'),
      ]);
      const results = await runDoctor(opts.config);
      process.stdout.write(renderResults(results, useColor(process.stdout)));
      process.exitCode = doctorExitCode(results);
    });
}
