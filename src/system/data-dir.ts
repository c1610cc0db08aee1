import { chmodSync, mkdirSync, statSync } from 'node:fs';
import { AgentError } from '../errors.js';
import { DATA_DIR_FAULT_WORDS, isReadOnlyFilesystem, nearestReadOnly } from './data-dir-fault.js';

/**
 * Creates dataDir (0700) or checks it. On a read-only file system the error says so,
 * with details.readOnly, instead of the ENOENT that mkdir -p gives there for a missing folder; an
 * existing dataDir on a read-only file system is not an error (its mode cannot be fixed, nor need be).
 */
export function ensureDataDir(dataDir: string): void {
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const st = statSync(dataDir);
    if (!st.isDirectory())
      throw new AgentError('DATA_DIR_NOT_DIRECTORY', `dataDir ${dataDir} exists but is not a directory`, { class: 'config' });
    if ((st.mode & 0o077) !== 0 && st.uid === process.getuid?.() && !isReadOnlyFilesystem(dataDir)) chmodSync(dataDir, 0o700);
  } catch (e) {
    if (e instanceof AgentError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    const readOnlyAt = nearestReadOnly(dataDir);
    if (readOnlyAt !== undefined)
      throw new AgentError(
        'DATA_DIR_UNUSABLE',
        `cannot create dataDir ${dataDir}: ${DATA_DIR_FAULT_WORDS['read-only']} (${readOnlyAt}); remount it read-write (mount -o remount,rw) or set dataDir`,
        { class: 'config', cause: e, details: { readOnly: true } },
      );
    throw new AgentError(
      'DATA_DIR_UNUSABLE',
      `cannot create or use dataDir ${dataDir} (${code ?? String(e)}); create it for the service user or set dataDir`,
      { class: 'config', cause: e },
    );
  }
}
