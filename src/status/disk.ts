import { statSync, statfsSync } from 'node:fs';
import { databaseNotAFile, databasePath, nearestReadOnly } from '../store/database.js';
import type { DiskSummary } from './snapshot.js';

/** Database size (with its WAL) and free space for the data directory; missing facts stay absent. */
export function diskSummary(dataDir: string, minFreeBytes?: number): DiskSummary {
  const out: DiskSummary = { dataDir };
  if (minFreeBytes !== undefined) out.minFreeBytes = minFreeBytes;
  const db = databasePath(dataDir);
  let size: number | undefined;
  for (const suffix of ['', '-wal']) {
    try {
      size = (size ?? 0) + statSync(db + suffix).size;
    } catch {
      // no file: nothing to add
    }
  }
  if (size !== undefined) out.databaseBytes = size;
  try {
    const fs = statfsSync(dataDir);
    // bavail: what an unprivileged process (the service user) may still use.
    out.freeBytes = fs.bavail * fs.bsize;
  } catch {
    // data dir missing or unreadable: the caller notes it
  }
  // access(W_OK) says EROFS for root too (data-dir-fault.ts): the daemon on such a card runs from memory.
  if (nearestReadOnly(dataDir) !== undefined) out.readOnly = true;
  const notAFile = databaseNotAFile(dataDir);
  if (notAFile !== undefined) out.databaseUnusable = `${notAFile.problem}: ${notAFile.fix}`;
  return out;
}
