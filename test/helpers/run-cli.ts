import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { CLI, REPO_ROOT } from './paths.js';

/**
 * The one way tests run the built CLI (`node dist/cli/main.js ...`), as a user would.
 *
 * The environment is the user's basics (PATH, HOME) and the test run's TMPDIR (so whatever the CLI
 * or a daemon leaves in its temporary folder counts against the run; see test/global-setup.ts),
 * plus what the test passes. Nothing else leaks in from the developer's shell: no
 * TELEMATICS_AGENT_PASSWORD, TELEMATICS_AGENT_CONFIG, CREDENTIALS_DIRECTORY or NOTIFY_SOCKET.
 */
export function cliEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH };
  for (const k of ['HOME', 'TMPDIR'] as const) if (process.env[k] !== undefined) env[k] = process.env[k];
  return { ...env, ...extra };
}

export interface CliSpawnOptions {
  /** Added to the environment of `cliEnv`. */
  env?: NodeJS.ProcessEnv;
  /** Default: the repository root. */
  cwd?: string;
  stdio?: StdioOptions;
  /** node's own flags, before the CLI (the unit's V8 flags for `run`). */
  nodeArgs?: string[];
}

/** Starts the CLI and returns the process (for commands that run until stopped: run, sim, status --watch). */
export function spawnCli(args: string[], options: CliSpawnOptions = {}): ChildProcess {
  return spawn(process.execPath, [...(options.nodeArgs ?? []), CLI, ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: cliEnv(options.env),
    stdio: options.stdio ?? ['ignore', 'pipe', 'pipe'],
  });
}

export interface CliRun {
  /** Exit code; null when the process was killed (see `signal`). */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliRunOptions extends Omit<CliSpawnOptions, 'stdio'> {
  /** Written to standard input, which is then closed (default: empty). */
  stdin?: string;
  /**
   * Kill the process (SIGKILL) after this long, so that a hung command fails its test instead of
   * outliving it; the result then has `code` null and `signal` SIGKILL. Default 50 s, under the
   * tests' 60 s timeout.
   */
  timeoutMs?: number;
}

/** Runs a CLI command to its end and collects its output. */
export function runCli(args: string[], options: CliRunOptions = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    const p = spawnCli(args, { ...options, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => p.kill('SIGKILL'), options.timeoutMs ?? 50_000);
    p.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    p.stdin!.end(options.stdin ?? '');
  });
}
