import { closeSync, constants, fchownSync, fstatSync, openSync, statSync } from 'node:fs';

/**
 * Files created in dataDir belong to dataDir's owner. `register`, `device show` and
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
  for (const file of files) giveFile(file, owner);
}

/**
 * dataDir belongs to the service user, so anything in it may be a trap laid for root: a symlink
 * `agent.db-shm -> /etc/shadow` or a hard link to a root file would hand that file over if followed.
 * The file is opened without following a symlink (O_NOFOLLOW fails with ELOOP on one), and only a
 * regular file with a single link is given away, through its descriptor, so the inode checked is
 * the inode changed (no window between check and chown).
 */
function giveFile(file: string, owner: { uid: number; gid: number }): void {
  let fd: number | undefined;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY);
    const st = fstatSync(fd);
    if (!st.isFile() || st.nlink !== 1) return;
    if (st.uid !== owner.uid || st.gid !== owner.gid) fchownSync(fd, owner.uid, owner.gid);
  } catch {
    // absent, a symlink (ELOOP), gone meanwhile, or a filesystem without owners: nothing to give away
  } finally {
    if (fd !== undefined) closeSync(fd);
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
