import type { Command } from 'commander';
import { ConfigError, EXIT_CONFIG } from '../errors.js';
import { CONFIG_OPTION } from './options.js';

export function registerConfigCommands(program: Command): void {
  const config = program.command('config').description('Inspect the configuration.');
  config
    .command('check')
    .description('Validate the configuration file and print the effective configuration, secrets masked (exit 0 valid, 2 invalid).')
    .option(...CONFIG_OPTION)
    .option('--quiet', 'print nothing when valid (no warnings either)')
    .action(async (opts: { config?: string; quiet?: boolean }) => {
      const [{ loadCliConfig }, { maskedConfig, passwordOverride }, { configWarnings }, { SECRET_MASK }] = await Promise.all([
        import('./context.js'),
        import('../config/load.js'),
        import('../config/warnings.js'),
        import('../config/secret.js'),
      ]);
      try {
        const cfg = loadCliConfig(opts.config);
        if (!opts.quiet) {
          process.stdout.write(`${JSON.stringify(maskedConfig(cfg), null, 2)}\n`);
          const warnings = configWarnings(cfg);
          for (const w of warnings) process.stderr.write(`warning: ${w.path}: ${w.message}\n`);
          if (cfg.credentials.passwordSource === 'config')
            process.stderr.write(
              `credentials.password is printed as "${SECRET_MASK}", which config check refuses: the printout is not a working configuration (${cfg.source} is)\n`,
            );
          const override = passwordOverride(cfg);
          if (override !== undefined) process.stderr.write(`${override}\n`);
          process.stderr.write(
            `configuration ${cfg.source} is valid${warnings.length > 0 ? ` (${warnings.length} warning${warnings.length === 1 ? '' : 's'})` : ''}\n`,
          );
        }
      } catch (e) {
        if (!(e instanceof ConfigError)) throw e;
        process.stderr.write(`${e.message}\n`);
        process.exitCode = EXIT_CONFIG;
      }
    });
}
