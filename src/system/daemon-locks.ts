import { createHash } from 'node:crypto';
import { accessSync, constants, realpathSync } from 'node:fs';
import path from 'node:path';
import { isAgentError } from '../errors.js';
import type { Logger } from '../log.js';
import { nearestReadOnly } from './data-dir-fault.js';
import { InstanceLock } from './instance-lock.js';

/**
 * The locks that keep one daemon per data directory, on a card that may be read-only
 * (before: started on a card ext4 had remounted read-only, `run` exited 2 on
 * `<dataDir>/agent.lock` and systemd restarted it every 5 s, recording nothing).
 *
 * What lock can a read-only file system offer? None that excludes: fcntl F_WRLCK needs a file
 * opened for writing, which EROFS refuses even to root, and a read lock (the only kind a read-only
 * file takes) is shared, so two daemons would both get one. flock(2) takes LOCK_EX on a read-only
 * descriptor, but Node has no flock and instance-lock.ts says why no native module is added for it.
 * So the stand-in lives where a write is still possible: the runtime directory (systemd's
 * RuntimeDirectory=, /run/telematics-agent, a tmpfs the service and root can write), as the same
 * SQLite EXCLUSIVE lock, in a file named after the data directory's real path, so that any daemon
 * on the same data directory meets it. Not os.tmpdir(): the service's is private (PrivateTmp=),
 * so a daemon started by hand would not meet the service's lock there. The file stays (unlinking a
 * lock file lets a process that opened it before the unlink lock the old inode beside a new one);
 * systemd removes the runtime directory when the service stops.
 *
 * Every daemon takes both where it can: the data directory's lock when the card is writable, the
 * runtime one always (when no runtime directory is writable, only the data directory's). A daemon
 * started read-only holds only the runtime lock, and one started later on the now writable card
 * still meets it there, before it would take the card's. Once the card is writable the read-only
 * daemon takes the card's lock as well (takeDataDirLock), before it opens the database read-write.
 * Not covered: a read-only card and no writable runtime directory (a daemon started by hand on a
 * machine without the service): the daemon runs and warns that nothing keeps a second one away.
 */
export interface DaemonLocksOptions {
  dataDir: string;
  /** The runtime directory (socket/path.ts runDir). */
  runDir: string;
  logger?: Pick<Logger, 'warn'>;
  pid?: number;
}

export class DaemonLocks {
  readonly #options: DaemonLocksOptions;
  #dataDirLock: InstanceLock | undefined;
  #runtimeLock: InstanceLock | undefined;

  private constructor(options: DaemonLocksOptions) {
    this.#options = options;
  }

  /**
   * Takes the data directory's lock, or notes that its file system is read-only, then the runtime
   * one. Throws AGENT_ALREADY_RUNNING when another daemon holds either, DATA_DIR_UNUSABLE for
   * anything else (a dataDir the user may not write is not read-only: that is a configuration fault).
   */
  static acquire(options: DaemonLocksOptions): DaemonLocks {
    const locks = new DaemonLocks(options);
    try {
      locks.#dataDirLock = InstanceLock.acquire(options.dataDir, lockOptions(options));
    } catch (e) {
      // Another daemon holds it (one started before the card went read-only): never a read-only card's fault.
      if (isAgentError(e) && e.code === 'AGENT_ALREADY_RUNNING') throw e;
      if (!isReadOnlyLockError(e) && nearestReadOnly(options.dataDir) === undefined) throw e;
    }
    try {
      locks.#runtimeLock = locks.#takeRuntimeLock();
    } catch (e) {
      locks.release();
      throw e;
    }
    if (!locks.#dataDirLock && !locks.#runtimeLock)
      options.logger?.warn(
        { dataDir: options.dataDir, runDir: options.runDir },
        'the data directory is read-only and no runtime directory is writable: nothing keeps a second agent from starting on it',
      );
    return locks;
  }

  /** Whether the data directory's own lock is not held because its file system is read-only. */
  get readOnly(): boolean {
    return this.#dataDirLock === undefined;
  }

  /**
   * The card became writable: take its lock. Returns false while it is still read-only; throws
   * AGENT_ALREADY_RUNNING when another daemon took it (one that does not share the runtime directory).
   */
  takeDataDirLock(): boolean {
    if (this.#dataDirLock) return true;
    try {
      this.#dataDirLock = InstanceLock.acquire(this.#options.dataDir, lockOptions(this.#options));
      return true;
    } catch (e) {
      if (isAgentError(e) && e.code === 'AGENT_ALREADY_RUNNING') throw e;
      if (isReadOnlyLockError(e) || nearestReadOnly(this.#options.dataDir) !== undefined) return false;
      throw e;
    }
  }

  release(): void {
    this.#runtimeLock?.release();
    this.#dataDirLock?.release();
  }

  #takeRuntimeLock(): InstanceLock | undefined {
    const name = `agent-${createHash('sha256').update(realDataDir(this.#options.dataDir)).digest('hex').slice(0, 16)}.lock`;
    const dir = this.#options.runDir;
    try {
      accessSync(dir, constants.W_OK);
    } catch {
      return undefined;
    }
    try {
      return InstanceLock.acquireFile(path.join(dir, name), this.#options.dataDir, lockOptions(this.#options));
    } catch (e) {
      if (isAgentError(e) && e.code === 'AGENT_ALREADY_RUNNING') throw e;
      // a runtime directory that takes no lock (full, read-only too): the data directory's lock alone
      return undefined;
    }
  }
}

function lockOptions(o: DaemonLocksOptions): { pid?: number; logger?: Pick<Logger, 'warn'> } {
  return { ...(o.pid !== undefined ? { pid: o.pid } : {}), ...(o.logger ? { logger: o.logger } : {}) };
}

/** The data directory's lock failed because its file system is read-only (instance-lock.ts lockError). */
export function isReadOnlyLockError(e: unknown): boolean {
  return isAgentError(e) && e.code === 'DATA_DIR_UNUSABLE' && e.details?.readOnly === true;
}

function realDataDir(dataDir: string): string {
  try {
    return realpathSync(dataDir);
  } catch {
    return path.resolve(dataDir);
  }
}
