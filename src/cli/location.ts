import { Option, type Command } from 'commander';
import { DEFAULT_MAX_SPREAD_M, DEFAULT_SAMPLES } from '../sites/capture.js';
import type { CommonOptions, HereOptions } from './location-options.js';
import { LOCATION_TYPES, PLATFORM_LOCATION_TYPES } from '../sites/site-types.js';
import { CONFIG_OPTION, numberIn } from './options.js';

/**
 * `telematics-agent location put|here` (docs/platform-contract.md, Sites). Exit codes:
 * 0 every location stored (or valid, with --dry-run); 1 the platform refused one or could not be
 * reached; 2 invalid input, usage or configuration (nothing was sent).
 */

const TYPE_HELP = `location type: ${PLATFORM_LOCATION_TYPES.join(', ')} (the platform's documented types), or another OTM 5.6 type: ${LOCATION_TYPES.filter((t) => !PLATFORM_LOCATION_TYPES.includes(t)).join(', ')}`;

export function registerLocationCommands(program: Command): void {
  const location = program
    .command('location')
    .description('Create or update OTM5 locations (depots, customer sites, yards) on the platform.');

  location
    .command('put')
    .description(
      'Validate and upload one location, or a JSON array of them (one request each), from FILE or - for standard input; prints what the platform stored.',
    )
    .argument('<file>', 'JSON file with one location object or an array of them; - reads standard input')
    .option(...CONFIG_OPTION)
    .option('--dry-run', 'validate and print the request body without sending (no configuration needed)')
    .option('--strict', 'treat warnings (such as swapped latitude and longitude) as errors')
    .action(async (file: string, opts: CommonOptions) => {
      const { putLocations } = await import('./location-actions.js');
      await putLocations(file, opts);
    });

  location
    .command('here')
    .description(
      'Survey this spot with the receiver: average N fixes that pass the quality gate (3D only), refuse when the spread is too large, and upload the location.',
    )
    .requiredOption('--name <name>', 'name of the location, e.g. "Depot Amersfoort"')
    .requiredOption('--type <type>', TYPE_HELP)
    .option('--samples <n>', 'number of fixes to average', numberIn(1, 3600, true), DEFAULT_SAMPLES)
    .option(
      '--max-spread <metres>',
      `refuse when a fix lies further than this from the average (default ${DEFAULT_MAX_SPREAD_M} m: a receiver standing in the open stays within about 5 m; more means movement or reflections)`,
      numberIn(0, Infinity, false, true),
    )
    .option('--timeout <seconds>', 'give up after this long (default 60 s plus 2 s per sample)', numberIn(0, Infinity, false, true))
    .addOption(
      new Option(
        '--source <where>',
        'where fixes come from: auto (the running daemon if there is one, else the receiver), daemon, receiver',
      )
        .choices(['auto', 'daemon', 'receiver'])
        .default('auto'),
    )
    .option(
      '--id <uuid>',
      'id of the location (default: derived from --name and the address flags, a UUID v5, so surveying the same site again updates it)',
    )
    .option('--street <street>')
    .option('--house-number <number>')
    .option('--house-number-addition <addition>')
    .option('--postal-code <code>')
    .option('--city <city>')
    .option('--country <XX>', 'ISO 3166-1 alpha-2 country code, e.g. NL (also checks that the fix lies in that country)')
    .option('--phone <number>')
    .option('--email <address>')
    .option('--contact-name <name>', 'contact person at the site')
    .option(...CONFIG_OPTION)
    .option('--dry-run', 'survey and print the request body without sending')
    .option('--strict', 'treat warnings as errors')
    .action(async (opts: HereOptions) => {
      const { surveyHere } = await import('./location-actions.js');
      await surveyHere(opts);
    });
}
