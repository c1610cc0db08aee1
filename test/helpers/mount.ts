import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

/**
 * Whether this run may loop-mount an ext4 image and make it fail (root, ext4 and the kernel's
 * /sys/fs/ext4/<dev>/trigger_fs_error, present since Linux 5.x); prints the skip reason when not.
 */
export function canMountExt4Card(testFile: string): boolean {
  const probe = mkdtempSync(path.join(os.tmpdir(), 'ta-ext4-probe-'));
  let ok = false;
  try {
    const card = ext4Card(probe, 'probe', 8);
    ok = card !== undefined && existsSync(`/sys/fs/ext4/${card.device}/trigger_fs_error`);
    card?.unmount();
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
  if (!ok)
    console.warn(`${testFile}: skipped, loop-mounting an ext4 image with trigger_fs_error is not possible here (CI runs it as root)`);
  return ok;
}

export interface Ext4Card {
  mountPoint: string;
  /** The block device's name under /sys/fs/ext4 (loopN). */
  device: string;
  /** What ext4 does on a storage error with errors=remount-ro: the kernel makes it read-only (emergency_ro). */
  failStorage(): void;
  unmount(): void;
}

/** A loop-mounted ext4 image of `mib` MiB at `<dir>/<name>`, mounted as Raspberry Pi OS mounts its root (errors=remount-ro). */
export function ext4Card(dir: string, name: string, mib: number): Ext4Card | undefined {
  const image = path.join(dir, `${name}.img`);
  const mountPoint = path.join(dir, name);
  mkdirSync(mountPoint, { recursive: true });
  if (!sh('truncate', ['-s', `${mib}M`, image]) || !sh('mkfs.ext4', ['-q', '-F', image])) return undefined;
  if (!sh('mount', ['-o', 'loop,errors=remount-ro', image, mountPoint])) return undefined;
  const line = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .find((l) => l.split(' ')[4] === mountPoint);
  const source = line?.split(' - ')[1]?.split(' ')[1] ?? '';
  const device = path.basename(source);
  return {
    mountPoint,
    device,
    failStorage: () => writeFileSync(`/sys/fs/ext4/${device}/trigger_fs_error`, '1'),
    unmount: () => {
      sh('umount', ['-l', mountPoint]);
      rmSync(image, { force: true });
    },
  };
}
