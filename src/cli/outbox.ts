import type { Command } from 'commander';
import { CONFIG_OPTION } from './options.js';

interface OutboxCliOptions {
  config?: string;
  deadLetters?: boolean;
  pending?: boolean;
  all?: boolean;
}

/**
 * `telematics-agent outbox ...`: the fixes waiting for the platform and the dead letters, for the
 * integrator who fixed what made the platform refuse them. Both commands work on the
 * database beside a running daemon (WAL; a write waits for the daemon's commit) and without one.
 */
export function registerOutboxCommands(program: Command): void {
  const outbox = program.command('outbox').description('Fixes waiting for the platform, and the dead letters.');
  outbox
    .command('requeue-dead-letters')
    .description(
      'Put every dead letter back into the outbox with its original event id (nothing is sent twice under another id); prints how many.',
    )
    .option(...CONFIG_OPTION)
    .action(async (opts: OutboxCliOptions) => {
      const { openOutboxDatabase } = await import('./outbox-database.js');
      const { requeueDeadLetters } = await import('../store/outbox/dead-letters.js');
      const db = openOutboxDatabase(opts.config);
      try {
        const r = requeueDeadLetters(db);
        for (const u of r.unreadable) process.stderr.write(`telematics-agent: dead letter ${u.seq} left in place: ${u.reason}\n`);
        process.stdout.write(
          `requeued ${r.requeued} dead letter${r.requeued === 1 ? '' : 's'} into the outbox${r.requeued > 0 ? ' (a running daemon sends them within seconds)' : ''}\n`,
        );
        if (r.unreadable.length > 0) process.exitCode = 1;
      } finally {
        db.close();
      }
    });
  outbox
    .command('export')
    .description('Write pending and dead-lettered fixes as JSON lines (one object a line, with "kind") for a person to inspect.')
    .argument('[file]', 'output file, or - for standard output', '-')
    .option('--dead-letters', 'only the dead letters')
    .option('--pending', 'only the pending fixes')
    .option('--all', 'both (the default)')
    .option(...CONFIG_OPTION)
    .action(async (file: string, opts: OutboxCliOptions) => {
      const { openOutboxDatabase, writeLines } = await import('./outbox-database.js');
      const { deadLetterLines, pendingLines } = await import('../store/outbox/dead-letters.js');
      const all = opts.all === true || (opts.pending !== true && opts.deadLetters !== true);
      const db = openOutboxDatabase(opts.config);
      try {
        // One read transaction: pending and dead letters as of the same instant.
        db.exec('BEGIN');
        const counts = { pending: 0, 'dead-letter': 0 };
        const lines = function* () {
          if (all || opts.pending) yield* pendingLines(db);
          if (all || opts.deadLetters) yield* deadLetterLines(db);
        };
        await writeLines(file, lines(), (l) => counts[l.kind]++);
        db.exec('COMMIT');
        process.stderr.write(
          `exported ${counts.pending} pending and ${counts['dead-letter']} dead-lettered fixes${file === '-' ? '' : ` to ${file}`}\n`,
        );
      } finally {
        db.close();
      }
    });
}
