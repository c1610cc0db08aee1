import { accessSync, constants, lstatSync, mkdirSync } from 'node:fs';
import path from 'node:path';

export const RUN_DIR = '/run/telematics-agent';
/** Overrides RUN_DIR (a packaging with another RuntimeDirectory=, and the tests). */
export const RUN_DIR_ENV = 'TELEMATICS_AGENT_RUN_DIR';

export function runDir(env: NodeJS.ProcessEnv = process.env): string {
  return env[RUN_DIR_ENV] || RUN_DIR;
}

/**
 * status.socketPath, or its default (config schema): /run/telematics-agent/status.sock when a
 * socket is there (the service's; its group can reach it but not write the 0750 directory, issue
 * 13.4) or that directory is writable (systemd's RuntimeDirectory=, before the daemon binds),
 * else <dataDir>/status.sock, so a daemon started by hand (demo, development) and the status
 * command agree without configuration.
 */
export function statusSocketPath(config: { status: { socketPath?: string }; dataDir: string }, dir: string = runDir()): string {
  if (config.status.socketPath) return config.status.socketPath;
  const inRunDir = path.join(dir, 'status.sock');
  try {
    if (lstatSync(inRunDir).isSocket()) return inRunDir;
  } catch {
    // absent, or the directory is closed to this user
  }
  try {
    accessSync(dir, constants.W_OK);
    return inRunDir;
  } catch {
    return path.join(config.dataDir, 'status.sock');
  }
}

/** For the server: the socket's folder must exist (a 0700 data dir or the runtime dir). */
export function ensureSocketDir(socketPath: string): void {
  mkdirSync(path.dirname(socketPath), { recursive: true, mode: 0o750 });
}
