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
    .option('--json', 'print the checks as one JSON object ({checks:[{name,verdict,detail,fix}],failed,warnings,exitCode}), for scripts')
    .option(
      '--test-password',
      "make a password grant even when the agent's valid token shows the credentials working (by default the password is tried only when no token works)",
    )
    .action(async (opts: { config?: string; json?: boolean; testPassword?: boolean }) => {
      const [{ doctorExitCode, renderResults, resultsJson }, { runDoctor }, { useColor }] = await Promise.all([
        import('../doctor/check.js'),
        import('../doctor/run-doctor.js'),
        import('../terminal/status-screen.js'),
      ]);
      const results = await runDoctor(opts.config, process.env, {}, { testPassword: opts.testPassword === true });
      // On a terminal long lines wrap under the detail; in a pipe (and with --json) they go out whole.
      const width = process.stdout.isTTY ? process.stdout.columns || 80 : undefined;
      process.stdout.write(opts.json ? resultsJson(results) : renderResults(results, useColor(process.stdout), width));
      process.exitCode = doctorExitCode(results);
    });
}
