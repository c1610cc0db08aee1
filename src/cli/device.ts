import type { Command } from 'commander';
import { EXIT_FAILURE } from '../errors.js';
import { CONFIG_OPTION } from './options.js';

/** `telematics-agent device show`: the device as the platform has it, by external device id. */
export function registerDeviceCommands(program: Command): void {
  const device = program.command('device').description('This device on the platform.');
  device
    .command('show')
    .description('Retrieve this device from the tracking device service (by externalSystemId and externalDeviceId) and print it.')
    .option(...CONFIG_OPTION)
    .action(async (opts: { config?: string }) => {
      const { runPlatformCommand } = await import('./platform-context.js');
      await runPlatformCommand(opts.config, 'device retrieval', async (ctx) => {
        const identity = await ctx.platform.registrar.identity();
        const found = await ctx.platform.registrar.fetch();
        if (found === undefined) {
          process.stderr.write(
            `telematics-agent: device ${identity.externalDeviceId} (from ${identity.source}) is not registered in external system ${identity.externalSystemId}; run: telematics-agent register\n`,
          );
          process.exitCode = EXIT_FAILURE;
          return;
        }
        process.stdout.write(`${JSON.stringify(found, null, 2)}\n`);
      });
    });
}
