import type { Command } from 'commander';
import { CONFIG_OPTION } from './options.js';
import { tuneV8ForDaemon } from '../daemon-v8.js';
import { runDaemon } from '../daemon.js';

/**
 * `telematics-agent run`: the daemon. Configuration errors end it with EXIT_CONFIG and a message
 * naming the key and the fix (restarting will not help); SIGTERM/SIGINT stop it cleanly with exit
 * 0: stop reading, commit the buffer, give in-flight uploads a few seconds, close the database.
 * Everything else is retried inside by the components' own supervisors.
 */
export function registerRunCommand(program: Command): void {
  program
    .command('run')
    .description('Run the agent: read the receiver, record fixes, deliver them to the platform (systemd service entry).')
    .option(...CONFIG_OPTION)
    .action((opts: { config?: string }) => runDaemon(opts.config))
    .hook('preAction', tuneV8ForDaemon);
}
