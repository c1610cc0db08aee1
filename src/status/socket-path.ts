import { accessSync, constants, mkdirSync } from 'node:fs';
import path from 'node:path';

export const RUN_DIR = '/run/telematics-agent';

/**
 * status.socketPath, or its default (config schema): /run/telematics-agent/status.sock when that
 * directory exists and is writable (systemd's RuntimeDirectory=), else <dataDir>/status.sock, so a
 * daemon started by hand (demo, development) and the status command agree without configuration.
 */
export function statusSocketPath(config: { status: { socketPath?: string }; dataDir: string }, runDir: string = RUN_DIR): string {
  if (config.status.socketPath) return config.status.socketPath;
  try {
    accessSync(runDir, constants.W_OK);
    return path.join(runDir, 'status.sock');
  } catch {
    return path.join(config.dataDir, 'status.sock');
  }
}

/** For the server: the socket's folder must exist (a 0700 data dir or the runtime dir). */
export function ensureSocketDir(socketPath: string): void {
  mkdirSync(path.dirname(socketPath), { recursive: true, mode: 0o750 });
}
