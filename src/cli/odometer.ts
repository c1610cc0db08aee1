import { InvalidArgumentError, type Command } from 'commander';
import { CONFIG_OPTION } from './options.js';

function parseKm(km: string): number {
  const value = Number(km);
  if (km.trim() === '' || !Number.isFinite(value) || value < 0 || value > 10_000_000)
    throw new InvalidArgumentError('not a reading in km: give a number such as 123456.7');
  return value;
}

/**
 * `telematics-agent odometer set KM`: the vehicle's own odometer reading, once, by the installer.
 * Stored beside the daemon's state and applied at its next start (a running daemon keeps its own
 * count until then); set again, the new reading replaces the count from that start on, and the
 * events already sent keep the values they had.
 */
export function registerOdometerCommands(program: Command): void {
  const odometer = program.command('odometer').description("The vehicle's odometer, carried on every movement and engine event.");
  odometer
    .command('set')
    .description("Set the odometer to the vehicle's own reading in km (once, at installation); applied at the daemon's next start.")
    .argument('<km>', 'the reading, in km (e.g. 123456.7)', parseKm)
    .option(...CONFIG_OPTION)
    .action(async (value: number, opts: { config?: string }) => {
      const { openOutboxDatabase } = await import('./outbox-database.js');
      const { MetaStore } = await import('../store/meta.js');
      const { MOTION_META_KEY, ODOMETER_SETTING_KEY } = await import('../motion/motion-record.js');
      const db = openOutboxDatabase(opts.config);
      try {
        const meta = new MetaStore(db);
        const current = meta.getJson<{ odometerM?: number }>(MOTION_META_KEY)?.odometerM;
        const before = meta.getJson<{ metres: number; setAt: number }>(ODOMETER_SETTING_KEY);
        meta.setJson(ODOMETER_SETTING_KEY, { metres: Math.round(value * 1000), setAt: Date.now() });
        // Stored at each movement event and at shutdown: a running daemon's own count is further on.
        const was = current === undefined ? '' : ` (the agent's last stored count: ${(current / 1000).toFixed(1)} km)`;
        const again = before
          ? `; replaces the reading of ${(before.metres / 1000).toFixed(1)} km set ${new Date(before.setAt).toISOString()}`
          : '';
        process.stdout.write(
          `odometer set to ${value.toFixed(1)} km${was}${again}: applied when the daemon next starts (systemctl restart telematics-agent)\n`,
        );
      } finally {
        db.close();
      }
    });
}
