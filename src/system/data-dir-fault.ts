import { accessSync, constants, existsSync } from 'node:fs';
import path from 'node:path';

/**
 * What keeps the data directory from taking writes, in the words a technician acts on (issue 22.9):
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

/** Whether the data directory's file system is mounted read-only (EROFS); false when it cannot tell. */
export function isReadOnlyFilesystem(dir: string, access: (p: string, mode: number) => void = accessSync): boolean {
  try {
    access(dir, constants.W_OK);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EROFS';
  }
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
