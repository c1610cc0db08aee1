import type { Command } from 'commander';
import { CONFIG_OPTION } from './options.js';

interface StatusCliOptions {
  json?: boolean;
  watch?: boolean;
  config?: string;
}

/**
 * `telematics-agent status`: what the agent is doing, in ten seconds, for a technician. Exit code
 * 0 healthy, 1 degraded, 2 failing or not running (src/status/health.ts).
 */
export function registerStatusCommand(program: Command): void {
  program
    .command('status')
    .description(
      "Show the agent's state: receiver, fix, registration, token, outbox, uploads, disk. Exit 0 healthy, 1 degraded, 2 failing or not running.",
    )
    .option(...CONFIG_OPTION)
    .option('--json', 'print the facts as one JSON object, for scripts')
    .option('-w, --watch', 'refresh every second, with the satellite table (Ctrl-C ends)')
    .action(async (opts: StatusCliOptions) => {
      // Loaded on use: a technician waits for this command, and `run`'s modules are not its business.
      const [{ assessHealth }, { renderStatus, useColor }, { fetchSnapshot, statusTarget }, { fitToScreen, wrapToWidth }] =
        await Promise.all([
          import('../status/health.js'),
          import('../terminal/status-screen.js'),
          import('../status/status-source.js'),
          import('../terminal/screen-fit.js'),
        ]);
      const target = statusTarget(opts.config);
      const once = async (): Promise<number> => {
        const snapshot = await fetchSnapshot(target);
        const health = assessHealth(snapshot);
        if (opts.json) {
          process.stdout.write(`${JSON.stringify({ ...snapshot, health })}\n`);
        } else {
          const tty = process.stdout.isTTY === true;
          // A redrawn frame one line shorter than the terminal: the cursor's line must not scroll it.
          const rows = tty ? Math.max(3, (process.stdout.rows || 24) - 1) : undefined;
          const cols = tty ? process.stdout.columns || 80 : undefined;
          const text = renderStatus(
            snapshot,
            {
              color: useColor(process.stdout),
              satellites: opts.watch === true,
              nowMs: Date.now(),
              ...(rows ? { maxLines: rows } : {}),
              ...(cols ? { width: cols } : {}),
            },
            health,
          );
          if (opts.watch && tty) {
            // Home and clear-to-end, so the screen redraws in place without flicker.
            const frame = fitToScreen(text, rows!, cols!);
            process.stdout.write(`\u001b[H${frame.replace(/\n/g, '\u001b[K\n')}\u001b[J`);
          } else {
            // On a terminal long lines wrap under their text; in a pipe they go out whole.
            process.stdout.write(tty ? wrapToWidth(text, cols!, 10) : text);
          }
        }
        return health.exitCode;
      };
      if (!opts.watch) {
        process.exitCode = await once();
        return;
      }
      if (process.stdout.isTTY && !opts.json) process.stdout.write('\u001b[2J');
      let code = await once();
      await new Promise<void>((resolve) => {
        const timer = setInterval(() => {
          void once().then(
            (c) => (code = c),
            () => undefined,
          );
        }, 1000);
        const stop = (): void => {
          clearInterval(timer);
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          resolve();
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
      process.exitCode = code;
    });
}
