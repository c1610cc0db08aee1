import { Command, InvalidArgumentError } from 'commander';
import { EXIT_FAILURE } from '../errors.js';
import { numberIn } from './options.js';
import type { SimUser } from '../sim/index.js';

interface SimOptions {
  port: number;
  user: string[];
  password: string[];
  carriers?: string;
  accessTtl: number;
  refreshTtl: number;
  earlyExpiry: number;
  seed: number;
  json?: boolean;
}

const collect = (value: string, previous: string[]): string[] => [...previous, value];

/** `telematics-agent sim`: the platform simulator on loopback, until SIGINT/SIGTERM. */
export function registerSimCommand(program: Command): void {
  program
    .command('sim')
    .description(
      'Run the platform simulator (token, tracking device and planning services) on 127.0.0.1, for tests, demos and integrators.',
    )
    .option('-p, --port <n>', 'TCP port on 127.0.0.1 (0 = any free port)', numberIn(0, 65535), 0)
    .option(
      '-u, --user <name>',
      'an account (repeat with --password for several); default: one account agent, password agent-password',
      collect,
      [],
    )
    .option('-P, --password <password>', 'password of the --user at the same position', collect, [])
    .option('--carriers <codes>', 'comma-separated carrier codes every account may register (others answer 403); default all')
    .option('--access-ttl <s>', 'access token lifetime (expires_in)', numberIn(1, 86_400 * 30), 3600)
    .option('--refresh-ttl <s>', 'refresh token lifetime', numberIn(1, 86_400 * 365), 86_400)
    .option('--early-expiry <fraction>', 'fraction of access tokens that expire early', numberIn(0, 1), 0)
    .option('--seed <n>', 'seed of the fault and early-expiry decisions', numberIn(0, 2 ** 32 - 1), 1)
    .option('--json', 'print the addresses as one JSON line instead of text')
    .action(async (opts: SimOptions) => {
      if (opts.user.length !== opts.password.length) throw new InvalidArgumentError('give one --password per --user, in the same order');
      const carriers = opts.carriers
        ?.split(',')
        .map((c) => c.trim())
        .filter((c) => c !== '');
      const users: SimUser[] =
        opts.user.length > 0
          ? opts.user.map((username, i) => ({ username, password: opts.password[i] ?? '' }))
          : [{ username: 'agent', password: 'agent-password' }];
      if (carriers) for (const u of users) u.carriers = carriers;
      const { configSnippet, PlatformSimulator } = await import('../sim/index.js');
      const sim = new PlatformSimulator({
        users,
        accessTtlS: opts.accessTtl,
        refreshTtlS: opts.refreshTtl,
        earlyExpiryFraction: opts.earlyExpiry,
        seed: opts.seed,
      });
      let urls: Awaited<ReturnType<typeof sim.start>>;
      try {
        urls = await sim.start({ port: opts.port });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw e;
        process.stderr.write(
          `telematics-agent: sim: port ${opts.port} on 127.0.0.1 is in use (another simulator?); pass another --port, or --port 0 for any free one\n`,
        );
        process.exitCode = EXIT_FAILURE;
        return;
      }
      // Listening for the stop before the banner: whoever reads the banner may send SIGTERM at once,
      // and a process preempted between its write and the handler would die by the signal.
      const stopped = new Promise<void>((resolve) => {
        const done = (): void => {
          process.off('SIGINT', done);
          process.off('SIGTERM', done);
          resolve();
        };
        process.on('SIGINT', done);
        process.on('SIGTERM', done);
      });
      const first = users[0] ?? { username: 'agent', password: 'agent-password' };
      if (opts.json) {
        process.stdout.write(`${JSON.stringify({ ...urls, config: configSnippet(urls, first) })}\n`);
      } else {
        process.stdout.write(
          [
            `platform simulator listening on 127.0.0.1:${urls.port}`,
            `  authUrl:     ${urls.authUrl}`,
            `  deviceUrl:   ${urls.deviceUrl}`,
            `  planningUrl: ${urls.planningUrl}`,
            `  adminUrl:    ${urls.adminUrl}  (GET stats, events, vehicle-events, locations, devices; POST faults)`,
            `    ${urls.adminUrl}/events          the location updates received (?type=all: with the vehicle events)`,
            `    ${urls.adminUrl}/vehicle-events  the trips and engine events received (start/stopMovingEvent, start/stopEngineEvent)`,
            `accounts: ${users.map((u) => u.username).join(', ')}`,
            'a complete configuration: save it as a file (e.g. sim-config.json), fill in the <...> placeholders',
            '(gnss and dataDir), check it with `telematics-agent config check --config sim-config.json`, then `run` with it:',
            JSON.stringify(configSnippet(urls, first), null, 2),
            '',
          ].join('\n'),
        );
      }
      await stopped;
      await sim.stop();
      process.stderr.write('platform simulator stopped\n');
    });
}
