import { chownSync, existsSync, statSync } from 'node:fs';

/**
 * Files created in dataDir belong to dataDir's owner (issue 13.3). `register`, `device show` and
 * `location` run as root (the password file is root-only); a database, lock or ballast they create
 * as root would lock the service user out of its own data (SQLITE_CANTOPEN, a restart loop). Only
 * root can give a file away, and only root needs to.
 */
export function giveToDataDirOwner(dataDir: string, files: readonly string[]): void {
  if (process.getuid?.() !== 0) return;
  let owner: { uid: number; gid: number };
  try {
    owner = statSync(dataDir);
  } catch {
    return;
  }
  if (owner.uid === 0 && owner.gid === 0) return;
  for (const file of files) {
    try {
      if (!existsSync(file)) continue;
      const st = statSync(file);
      if (st.uid !== owner.uid || st.gid !== owner.gid) chownSync(file, owner.uid, owner.gid);
    } catch {
      // gone meanwhile, or a filesystem without owners: nothing to give away
    }
  }
}

/** "owner 996:996, mode 0600" for messages about a file that cannot be opened. */
export function ownerAndMode(file: string): string {
  try {
    const st = statSync(file);
    return `owner ${st.uid}:${st.gid}, mode ${(st.mode & 0o7777).toString(8).padStart(4, '0')}`;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'absent' : `not readable (${(e as NodeJS.ErrnoException).code ?? 'error'})`;
  }
}
