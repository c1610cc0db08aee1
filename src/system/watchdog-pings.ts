import type { Logger } from '../log.js';
import type { OutboxCommitState } from '../store/outbox/outbox.js';
import { dataDirFault } from './data-dir-fault.js';
import type { SdNotify } from './sd-notify.js';

/**
 * Commit errors after which a restart is the better supervisor. A full disk is not one of them: a
 * restart frees no space, throws away the fixes held in memory, and delivery (which is what frees
 * space) goes on meanwhile. Nor is a read-only card (issue 22.10): a restart makes it no more
 * writable and drops what is held; the daemon stores it once the card is remounted read-write. The
 * watchdog is still not fed as if all were well: each ping then carries STATUS= "disk full ..." or
 * "read-only data directory ..." for `systemctl status`, and `status` says FAILING.
 */
const RESTART_WORTHY = (code: string) => !['SQLITE_FULL', 'ENOSPC', 'STORE_DISK_FULL', 'SQLITE_BUSY'].includes(code);

export interface WatchdogPingsOptions {
  notify: SdNotify;
  logger: Logger;
  dataDir: string;
  /** The outbox's commit state; undefined before it exists. */
  commitState: () => OutboxCommitState | undefined;
  /** The daemon runs on a read-only card's copy (agent.ts). */
  readOnly: () => boolean;
}

/** WATCHDOG=1 while the loop runs and the outbox can commit (a dead SD card earns a restart); undefined when systemd asks for none. */
export function startWatchdogPings(o: WatchdogPingsOptions): NodeJS.Timeout | undefined {
  const every = o.notify.watchdogIntervalMs();
  if (every === undefined) return undefined;
  let announced = '';
  const timer = setInterval(() => {
    const state = o.commitState();
    const err = state?.lastCommitError;
    const readOnly = o.readOnly() || (err !== undefined && dataDirFault(o.dataDir, err.code) === 'read-only');
    if (err && !readOnly && RESTART_WORTHY(err.code)) {
      o.logger.error({ err }, 'outbox cannot commit: withholding the watchdog ping so that systemd restarts the agent');
      return;
    }
    const status = readOnly
      ? `read-only data directory: ${state?.buffered ?? 0} fixes held in memory`
      : state?.diskFull
        ? `disk full: ${state.buffered} fixes held in memory, delivery goes on`
        : 'recording';
    o.notify.send(['WATCHDOG=1', ...(status !== announced ? [`STATUS=${status}`] : [])]);
    announced = status;
  }, every);
  timer.unref();
  return timer;
}
