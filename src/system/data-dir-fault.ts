import { accessSync, constants, existsSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';

/**
 * What keeps the data directory from taking writes, in the words a technician acts on:
 * status said "SQLITE_IOERR_WRITE" and doctor "all checks passed" while the card was read-only.
 * access(W_OK) answers EROFS on a read-only file system even for root, so it tells a card that
 * ext4 remounted read-only (errors=remount-ro) from a database refusing for its own reasons.
 */
export type DataDirFault = 'read-only' | 'full' | 'io-error';

export const DATA_DIR_FAULT_WORDS: Record<DataDirFault, string> = {
  'read-only': "the data directory's filesystem is read-only",
  full: "the data directory's filesystem is full",
  'io-error': "the data directory's storage reports I/O errors",
};

/**
 * Whether the data directory's file system takes no writes: mounted read-only (access(2) says
 * EROFS), or made read-only by the kernel after storage errors (ext4 errors=remount-ro, the
 * default for Raspberry Pi OS's root), which access(2) and statvfs(ST_RDONLY) do not show on
 * current kernels: only the superblock's options in /proc/self/mountinfo say "emergency_ro" (or
 * "ro"), while every write answers EROFS. False when it cannot tell.
 */
export function isReadOnlyFilesystem(
  dir: string,
  access: (p: string, mode: number) => void = accessSync,
  mountinfo: () => string = readMountinfo,
): boolean {
  try {
    access(dir, constants.W_OK);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EROFS';
  }
  return readOnlyMount(dir, mountinfo) !== undefined;
}

/** How the file system of `dir` is read-only by its mount: by `mount -o ro`, or by the kernel after errors. */
export function readOnlyMount(dir: string, mountinfo: () => string = readMountinfo): 'mounted' | 'kernel' | undefined {
  const m = mountOf(dir, mountinfo);
  if (!m) return undefined;
  if (m.superOptions.includes('emergency_ro')) return 'kernel';
  if (m.options.includes('ro') || m.superOptions.includes('ro')) return 'mounted';
  return undefined;
}

export interface MountFacts {
  mountPoint: string;
  fsType: string;
  source: string;
  /** Per-mount options (ro/rw ...). */
  options: string[];
  /** The file system's own options (ro/rw, errors=..., emergency_ro). */
  superOptions: string[];
}

/** The mount that holds `dir` (the nearest existing folder's real path), from /proc/self/mountinfo. */
export function mountOf(dir: string, mountinfo: () => string = readMountinfo): MountFacts | undefined {
  let text: string;
  let at: string;
  try {
    text = mountinfo();
    at = realpathSync(nearestExisting(dir));
  } catch {
    return undefined;
  }
  let best: MountFacts | undefined;
  for (const line of text.split('\n')) {
    const f = line.split(' ');
    const dash = f.indexOf('-', 6);
    if (dash < 0 || f.length < dash + 4) continue;
    const mountPoint = unescapeMount(f[4]!);
    const inside = mountPoint === '/' || at === mountPoint || at.startsWith(`${mountPoint}/`);
    // Mounts stacked on one point: the later line is the one on top.
    if (!inside || (best && best.mountPoint.length > mountPoint.length)) continue;
    best = {
      mountPoint,
      fsType: f[dash + 1]!,
      source: unescapeMount(f[dash + 2]!),
      options: f[5]!.split(','),
      superOptions: f[dash + 3]!.split(','),
    };
  }
  return best;
}

function readMountinfo(): string {
  return readFileSync('/proc/self/mountinfo', 'utf8');
}

/** mountinfo escapes space, tab, newline and backslash as \ooo. */
function unescapeMount(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

function nearestExisting(dir: string): string {
  let at = path.resolve(dir);
  while (!existsSync(at)) {
    const up = path.dirname(at);
    if (up === at) break;
    at = up;
  }
  return at;
}

/** The fault behind a failed commit's SQLite code, checking the file system for read-only. */
export function dataDirFault(
  dir: string,
  sqliteCode: string,
  readOnly: (d: string) => boolean = isReadOnlyFilesystem,
): DataDirFault | undefined {
  if (readOnly(dir)) return 'read-only';
  if (sqliteCode.startsWith('SQLITE_FULL')) return 'full';
  if (sqliteCode.startsWith('SQLITE_IOERR')) return 'io-error';
  return undefined;
}

/** dataDir, or its nearest existing folder, when that is on a read-only file system. */
export function nearestReadOnly(dataDir: string): string | undefined {
  let at = path.resolve(dataDir);
  for (;;) {
    if (existsSync(at)) return isReadOnlyFilesystem(at) ? at : undefined;
    const up = path.dirname(at);
    if (up === at) return undefined;
    at = up;
  }
}
