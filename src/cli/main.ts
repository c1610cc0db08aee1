#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { ConfigError, EXIT_CONFIG, EXIT_FAILURE, describeError, isAgentError } from '../errors.js';
import { VERSION } from '../version.js';
import { registerConfigCommands } from './config.js';
import { registerSimCommand } from './sim.js';
import { registerDriveCommand } from './sim-drive.js';
import { registerStatusCommand } from './status.js';
import { registerDemoCommand } from './demo.js';
import { registerDoctorCommand } from './doctor.js';
import { registerRegisterCommand } from './register.js';
import { registerDeviceCommands } from './device.js';
import { registerLocationCommands } from './location.js';
import { registerRunCommand } from './run.js';
import { registerNmeaCommands } from './nmea.js';
import { registerOutboxCommands } from './outbox.js';
import { registerOdometerCommands } from './odometer.js';
import { sqliteBinding } from '../system/sqlite-binding.js';

/**
 * The command-line entry. Each command lives in its own file under src/cli/ and adds itself to
 * the program here; the command files build what they need from the validated configuration.
 */
/** Whether commander has already printed the current usage error (it prints its own, not an action's). */
let usageErrorPrinted = false;

export function buildProgram(): Command {
  const program = new Command();
  // Set before the commands are added: each command copies its parent's output settings.
  program.configureOutput({
    outputError: (str, write) => {
      usageErrorPrinted = true;
      write(str);
    },
  });
  program
    .name('telematics-agent')
    .description('GPS telematics edge agent: NMEA from the receiver to the fleet platform, buffered in SQLite.')
    .version(VERSION, '-V, --version')
    .showHelpAfterError('(run with --help for usage)')
    .configureHelp({ sortSubcommands: false })
    .exitOverride();
  registerRunCommand(program);
  registerConfigCommands(program);
  registerSimCommand(program);
  registerDriveCommand(program);
  registerStatusCommand(program);
  registerDemoCommand(program);
  registerDoctorCommand(program);
  registerRegisterCommand(program);
  registerDeviceCommands(program);
  registerLocationCommands(program);
  registerNmeaCommands(program);
  registerOutboxCommands(program);
  registerOdometerCommands(program);
  return program;
}

export async function main(argv: string[] = process.argv): Promise<number> {
  try {
    // A node the package carries no better-sqlite3 for is refused here, before any command runs,
    // with the sentence as it is (it names the program).
    sqliteBinding();
  } catch (e) {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    return EXIT_CONFIG;
  }
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (e) {
    if (e instanceof CommanderError) {
      // --help and --version end here with code 0. Commander prints its own usage errors; one an
      // action throws (InvalidArgumentError: `sim --user bob`) reaches here unprinted.
      if (e.exitCode === 0) return 0;
      if (!usageErrorPrinted) process.stderr.write(`telematics-agent: ${e.message}\n(run with --help for usage)\n`);
      return EXIT_CONFIG;
    }
    if (e instanceof ConfigError) {
      process.stderr.write(`telematics-agent: ${e.message}\n`);
      return EXIT_CONFIG;
    }
    process.stderr.write(`telematics-agent: ${describeError(e)}\n`);
    return isAgentError(e) && e.errorClass === 'config' ? EXIT_CONFIG : EXIT_FAILURE;
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`telematics-agent: ${describeError(e)}\n`);
    process.exitCode = EXIT_FAILURE;
  },
);
