import type { Command } from 'commander';
import { numberIn } from './options.js';

interface DemoCliOptions {
  minutes: number;
  speed: number;
  seed: number;
  keep?: boolean;
}

/** `telematics-agent demo` (npm start): the whole agent against the simulator, on loopback. */
export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description(
      'Run the agent end to end on this machine: platform simulator, synthetic receiver drive, a platform outage, the live status screen and a summary. No network or receiver needed.',
    )
    .option('-m, --minutes <n>', 'length of the synthetic drive', numberIn(1, 120), 10)
    .option('-s, --speed <x>', 'replay pace (8 = eight times real time)', numberIn(1, 1000), 8)
    .option('--seed <n>', 'seed of the drive and the simulator', numberIn(0, 2 ** 32 - 1), 1)
    .option('--keep', 'keep the temporary directory (config, database, daemon log)')
    .action(async (opts: DemoCliOptions) => {
      const [{ runDemo }, { useColor }] = await Promise.all([import('../demo/run-demo.js'), import('../terminal/status-screen.js')]);
      // Ctrl-C ends the demo cleanly: daemon and simulator stopped, the terminal's cursor restored.
      const interrupted = new AbortController();
      const stop = (): void => interrupted.abort();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      try {
        const result = await runDemo({
          minutes: opts.minutes,
          speed: opts.speed,
          seed: opts.seed,
          out: process.stdout,
          color: useColor(process.stdout),
          signal: interrupted.signal,
          ...(opts.keep ? { keep: true } : {}),
        });
        process.exitCode = result.ok ? 0 : 1;
      } catch (e) {
        if (!interrupted.signal.aborted) throw e;
        process.stderr.write('demo interrupted\n');
        process.exitCode = 130;
      } finally {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
      }
    });
}
