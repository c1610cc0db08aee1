import { InvalidArgumentError, type Command } from 'commander';
import { CONFIG_OPTION } from './options.js';

/** A reading as the argument parser of commander: the number alone, in its range. */
function reading(unit: string, max: number, example: string) {
  return (text: string): number => {
    const value = Number(text);
    if (text.trim() === '' || !Number.isFinite(value) || value < 0 || value > max)
      throw new InvalidArgumentError(`not a reading in ${unit}: give the number alone, from 0 to ${max}, such as ${example}`);
    return value;
  };
}

/** What one `... set` command stores: its meta key, the stored value, and the words of its answer. */
interface Setting {
  key: string;
  stored: Record<string, number>;
  /** "odometer set to 123456.7 km" */
  said: string;
  /** The agent's own count in the stored motion state, as text ("123456.7 km"), if it has one. */
  current(state: Record<string, unknown> | undefined): string | undefined;
  /** The setting it replaces, as text. */
  before(setting: Record<string, unknown>): string;
}

/**
 * Stores a setting beside the daemon's state, for the daemon to apply at its next start (a running
 * daemon keeps its own count until then). Before the first start there is no database yet: it is
 * created here (owned by dataDir's owner when root runs this), which is the installer's moment.
 */
async function storeSetting(configPath: string | undefined, s: Setting): Promise<void> {
  const { existsSync } = await import('node:fs');
  const { cliLogger, loadCliConfig, openCliDatabase } = await import('./context.js');
  const { databasePath } = await import('../store/database.js');
  const { MetaStore } = await import('../store/meta.js');
  const { MOTION_META_KEY } = await import('../motion/motion-record.js');
  const config = loadCliConfig(configPath);
  const file = databasePath(config.dataDir);
  const created = !existsSync(file);
  // The daemon commits about once a second; a write here waits for it rather than failing.
  const db = openCliDatabase(config, cliLogger(config, 'warn'), { busyTimeoutMs: 10_000 });
  try {
    const meta = new MetaStore(db);
    const current = s.current(meta.getJson<Record<string, unknown>>(MOTION_META_KEY));
    const before = meta.getJson<Record<string, unknown> & { setAt: number }>(s.key);
    meta.setJson(s.key, { ...s.stored, setAt: Date.now() });
    // Stored at each vehicle event and at shutdown: a running daemon's own count is further on.
    const was = current === undefined ? '' : ` (the agent's last stored count: ${current})`;
    const again = before ? `; replaces the reading of ${s.before(before)} set ${new Date(before.setAt).toISOString()}` : '';
    const when = created
      ? `stored in ${file} (created: the agent has not run with this dataDir yet), applied at the daemon's first start`
      : 'applied when the daemon next starts (systemctl restart telematics-agent)';
    process.stdout.write(`${s.said}${was}${again}: ${when}\n`);
  } finally {
    db.close();
  }
}

const finite = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/**
 * `telematics-agent odometer set KM` and `engine-hours set H`: the vehicle's own readings, once, by
 * the installer, before or after the daemon's first start. Applied at the daemon's next start; set
 * again, the new reading replaces the count from that start on, and the events already sent keep
 * the values they had.
 */
export function registerOdometerCommands(program: Command): void {
  const odometer = program.command('odometer').description("The vehicle's odometer, carried on every movement and engine event.");
  odometer
    .command('set')
    .description(
      "Set the odometer to the vehicle's own reading in km (once, at installation, before or after the first start); applied at the daemon's next start.",
    )
    .argument('<km>', 'the reading, in km (e.g. 123456.7)', reading('km', 10_000_000, '123456.7'))
    .option(...CONFIG_OPTION)
    .action(async (km: number, opts: { config?: string }) => {
      const { ODOMETER_SETTING_KEY } = await import('../motion/motion-record.js');
      const inKm = (m: unknown): string | undefined => {
        const v = finite(m);
        return v === undefined ? undefined : `${(v / 1000).toFixed(1)} km`;
      };
      await storeSetting(opts.config, {
        key: ODOMETER_SETTING_KEY,
        stored: { metres: Math.round(km * 1000) },
        said: `odometer set to ${km.toFixed(1)} km`,
        current: (state) => inKm(state?.odometerM),
        before: (setting) => inKm(setting.metres) ?? '?',
      });
    });

  const hours = program
    .command('engine-hours')
    .description("The vehicle's engine hours (ignition-on time), carried on every movement and engine event.");
  hours
    .command('set')
    .description(
      "Set the engine hours to the vehicle's own hour meter in hours (once, at installation, before or after the first start); applied at the daemon's next start.",
    )
    .argument('<hours>', 'the reading, in hours (e.g. 1234.5)', reading('hours', 1_000_000, '1234.5'))
    .option(...CONFIG_OPTION)
    .action(async (h: number, opts: { config?: string }) => {
      const { ENGINE_HOURS_SETTING_KEY } = await import('../motion/motion-record.js');
      const inHours = (s: unknown): string | undefined => {
        const v = finite(s);
        return v === undefined ? undefined : `${(v / 3600).toFixed(1)} h`;
      };
      await storeSetting(opts.config, {
        key: ENGINE_HOURS_SETTING_KEY,
        stored: { seconds: Math.round(h * 3600) },
        said: `engine hours set to ${h.toFixed(1)} h`,
        current: (state) => inHours(state?.engineS),
        before: (setting) => inHours(setting.seconds) ?? '?',
      });
    });
}
