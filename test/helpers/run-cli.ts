import { spawn } from 'node:child_process';
import { CLI } from './paths.js';

export interface CliRun {
  /** Exit code; null when the process was killed (see `signal`). */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliRunOptions {
  /** Written to standard input, which is then closed (default: empty). */
  stdin?: string;
  /**
   * Kill the process (SIGKILL) after this long, so that a hung command fails its test instead of
   * outliving it; the result then has `code` null and `signal` SIGKILL. Default: no limit.
   */
  timeoutMs?: number;
}

/**
 * Runs the built CLI (`node dist/cli/main.js ...`) as a user would, with neither
 * TELEMATICS_AGENT_PASSWORD nor TELEMATICS_AGENT_CONFIG from the test's environment.
 */
export function runCli(args: string[], options: CliRunOptions = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CLI, ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, TELEMATICS_AGENT_PASSWORD: '', TELEMATICS_AGENT_CONFIG: '' },
    });
    let stdout = '';
    let stderr = '';
    const timer = options.timeoutMs !== undefined ? setTimeout(() => p.kill('SIGKILL'), options.timeoutMs) : undefined;
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    p.stdin.end(options.stdin ?? '');
  });
}
