import type { Command } from 'commander';
import { CONFIG_OPTION } from './options.js';

/** `telematics-agent register`: the device upsert now, printing the device as the platform returns it. */
export function registerRegisterCommand(program: Command): void {
  program
    .command('register')
    .description('Register (or update) this device with the tracking device service now and print the device as the platform returns it.')
    .option(...CONFIG_OPTION)
    .action(async (opts: { config?: string }) => {
      const { runPlatformCommand } = await import('./platform-context.js');
      await runPlatformCommand(opts.config, 'registration', async (ctx) => {
        const { registered, device } = await ctx.platform.registrar.registerNow();
        process.stdout.write(`${JSON.stringify(device, null, 2)}\n`);
        process.stderr.write(
          `registered: deviceUUID ${registered.deviceUUID}, externalDeviceId ${registered.externalDeviceId} (from ${registered.source}) in external system ${registered.externalSystemId}\n`,
        );
      });
    });
}
