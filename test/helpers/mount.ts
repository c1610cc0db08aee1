import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Runs a command quietly; true when it exits 0. */
export function sh(cmd: string, args: string[]): boolean {
  return spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;
}

/**
 * Whether this run may mount a tmpfs (and, with `remount`, remount it read-only): root, as in CI.
 * When it may not, prints the one-line reason the calling test file skips.
 */
export function canMountTmpfs(testFile: string, options: { remount?: boolean } = {}): boolean {
  const probe = mkdtempSync(path.join(os.tmpdir(), 'ta-mount-probe-'));
  const ok = options.remount
    ? sh('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', probe]) && sh('mount', ['-o', 'remount,ro', probe]) && sh('umount', [probe])
    : sh('mount', ['-t', 'tmpfs', '-o', 'size=1m,ro', 'tmpfs', probe]) && sh('umount', [probe]);
  rmSync(probe, { recursive: true, force: true });
  if (!ok)
    console.warn(
      `${testFile}: skipped, ${options.remount ? 'mount/remount of a tmpfs' : 'mount -t tmpfs'} is not permitted here (CI runs it as root)`,
    );
  return ok;
}
