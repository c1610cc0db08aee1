import { chmodSync, lstatSync, unlinkSync } from 'node:fs';
import { connect } from 'node:net';

/**
 * The status socket's file: who may take it over, and who removes it. A daemon removes a stale
 * socket left by a crash, never one another process still answers on, and at stop removes the
 * file it bound and no other (a second daemon configured with the same socketPath).
 */

/** After listen(): the file's mode (the service user and its group), and its inode, the proof of ownership. */
export function claimSocketFile(file: string, mode: number): number {
  chmodSync(file, mode);
  return lstatSync(file).ino;
}

/** At stop: removes the socket file if it is still the one this server bound (inode `created`). */
export function releaseSocketFile(file: string, created: number): void {
  // Never unlink a socket another process bound meanwhile.
  try {
    if (lstatSync(file).ino === created) unlinkSync(file);
  } catch {
    // already gone (server.close removes it on most platforms)
  }
}

/**
 * A socket file left by a crashed daemon blocks listen(); a non-socket file there is not ours, and
 * neither is a socket that something still answers on (another daemon configured with the same
 * status.socketPath): that one is left alone and this server does not start.
 */
export async function removeStaleSocket(file: string): Promise<void> {
  try {
    if (!lstatSync(file).isSocket()) return;
  } catch {
    return; // absent: nothing to remove
  }
  const live = await new Promise<boolean>((resolve) => {
    const probe = connect({ path: file });
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', (e: NodeJS.ErrnoException) => resolve(e.code !== 'ECONNREFUSED' && e.code !== 'ENOENT'));
  });
  if (live) throw new Error(`${file} is in use by another process; not taking it over`);
  try {
    unlinkSync(file);
  } catch {
    // gone meanwhile
  }
}
