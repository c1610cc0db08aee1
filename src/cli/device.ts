import { Option, type Command } from 'commander';
import { systemClock } from '../system/clock.js';
import { EXIT_FAILURE } from '../errors.js';
import { CONFIG_OPTION, urlPathIdArg } from './options.js';

interface ShowOptions {
  config?: string;
  plate?: string;
  externalDeviceId?: string;
}

/**
 * `telematics-agent device show|list`: the tracking device service's three retrievals (platform contract, Device registration):
 * this device or another of the same external system by external device id, one by licence plate,
 * and every device of the account.
 */
export function registerDeviceCommands(program: Command): void {
  const device = program.command('device').description('Devices on the platform (tracking device service).');
  device
    .command('show')
    .description(
      'Retrieve one device and print it as JSON: this device (by externalSystemId and externalDeviceId), or another of the same external system by --external-device-id or --plate.',
    )
    .option(...CONFIG_OPTION)
    .addOption(new Option('--plate <PLATE>', 'the device with this licence plate').conflicts('externalDeviceId').argParser(urlPathIdArg))
    .addOption(new Option('--external-device-id <ID>', 'another device of the same external system').argParser(urlPathIdArg))
    .action(async (opts: ShowOptions) => {
      const [{ runPlatformCommand }, { DeviceClient }] = await Promise.all([
        import('./platform-context.js'),
        import('../platform/device/client.js'),
      ]);
      await runPlatformCommand(opts.config, 'device retrieval', async (ctx) => {
        const identity = await ctx.platform.registrar.identity();
        const system = identity.externalSystemId;
        const client = new DeviceClient({
          requester: ctx.platform.requester,
          deviceUrl: ctx.config.platform.deviceUrl,
          clock: systemClock,
        });
        let found: Record<string, unknown> | undefined;
        let missing: string;
        if (opts.plate !== undefined) {
          found = await client.byLicensePlate(system, opts.plate);
          missing = `no device with licence plate ${opts.plate} in external system ${system}`;
        } else if (opts.externalDeviceId !== undefined) {
          found = await client.byExternalId(system, opts.externalDeviceId);
          missing = `no device ${opts.externalDeviceId} in external system ${system}`;
        } else {
          found = await ctx.platform.registrar.fetch();
          missing = `device ${identity.externalDeviceId} (from ${identity.source}) is not registered in external system ${system}; run: telematics-agent register`;
        }
        if (found === undefined) {
          process.stderr.write(`telematics-agent: ${missing}\n`);
          process.exitCode = EXIT_FAILURE;
          return;
        }
        process.stdout.write(`${JSON.stringify(found, null, 2)}\n`);
      });
    });
  device
    .command('list')
    .description('List every device of the carriers associated with the account: a table, or JSON with --json.')
    .option(...CONFIG_OPTION)
    .option('--json', 'print the devices as the platform returned them, as one JSON array')
    .action(async (opts: { config?: string; json?: boolean }) => {
      const [{ runPlatformCommand }, { DeviceClient }, { deviceTable }] = await Promise.all([
        import('./platform-context.js'),
        import('../platform/device/client.js'),
        import('./device-table.js'),
      ]);
      await runPlatformCommand(opts.config, 'device list', async (ctx) => {
        const client = new DeviceClient({
          requester: ctx.platform.requester,
          deviceUrl: ctx.config.platform.deviceUrl,
          clock: systemClock,
        });
        const devices = await client.list();
        process.stdout.write(opts.json ? `${JSON.stringify(devices, null, 2)}\n` : deviceTable(devices));
      });
    });
}
