import type { Logger } from '../log.js';
import { dataDirFault } from './data-dir-fault.js';
import type { SdNotify } from './sd-notify.js';

/**
 * Commit errors after which a restart is the better supervisor. A full disk is not one of them: a
 * restart frees no space, throws away the fixes held in memory, and delivery (which is what frees
 * space) goes on meanwhile. Nor is a read-only card: a restart makes it no more writable and drops
 * what is held; the daemon stores it once the card is remounted read-write. The watchdog is still
 * not fed as if all were well: each ping then carries STATUS= "disk full ..." or "read-only data
 * directory ..." for `systemctl status`, and `status` says FAILING.
 */
const RESTART_WORTHY = (code: string) => !['SQLITE_FULL', 'ENOSPC', 'STORE_DISK_FULL', 'SQLITE_BUSY'].includes(code);

/** What the pings need of the outbox (store/outbox/status.ts OutboxCommitState has this shape). */
export interface CommitStateView {
  buffered: number;
  lastCommitError?: { code: string } | undefined;
  diskFull?: unknown;
}

export interface WatchdogPingsOptions {
  notify: SdNotify;
  logger: Logger;
  dataDir: string;
  /** The outbox's commit state; undefined before it exists. */
  commitState: () => CommitStateView | undefined;
  /** The daemon runs on a read-only card's copy (agent.ts). */
  readOnly: () => boolean;
  /** What the store is doing while it restarts (a salvage, a recovery); undefined otherwise. Fed meanwhile. */
  restarting?: () => string | undefined;
  /** Monotonic ms (the injected clock); default performance.now. */
  monotonicMs?: () => number;
}

/** WATCHDOG=1 while the loop runs and the outbox can commit (a dead SD card earns a restart). */
export class WatchdogPings {
  readonly #options: WatchdogPingsOptions;
  readonly #every: number | undefined;
  #timer: NodeJS.Timeout | undefined;
  #announced = '';
  #lastPingMs = -Infinity;

  constructor(o: WatchdogPingsOptions) {
    this.#options = o;
    this.#every = o.notify.watchdogIntervalMs();
  }

  /** Starts the pings (nothing when systemd asks for none); a second start is a no-op. */
  start(): void {
    if (this.#every === undefined || this.#timer) return;
    this.#timer = setInterval(() => this.#tick(), this.#every);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /**
   * Called between the chunks of long synchronous work (a salvage of a large file holds the event
   * loop for many seconds, longer than WatchdogSec): pings when one is due.
   */
  duringWork(what: string): void {
    if (this.#every === undefined || this.#now() - this.#lastPingMs < this.#every) return;
    this.#send(what);
  }

  #tick(): void {
    const restarting = this.#options.restarting?.();
    if (restarting !== undefined) return this.#send(restarting);
    const state = this.#options.commitState();
    const err = state?.lastCommitError;
    const readOnly = this.#options.readOnly() || (err !== undefined && dataDirFault(this.#options.dataDir, err.code) === 'read-only');
    if (err && !readOnly && RESTART_WORTHY(err.code)) {
      this.#options.logger.error({ err }, 'outbox cannot commit: withholding the watchdog ping so that systemd restarts the agent');
      return;
    }
    const status = readOnly
      ? `read-only data directory: ${state?.buffered ?? 0} fixes held in memory`
      : state?.diskFull
        ? `disk full: ${state.buffered} fixes held in memory, delivery goes on`
        : 'recording';
    this.#send(status);
  }

  #send(status: string): void {
    this.#lastPingMs = this.#now();
    this.#options.notify.send(['WATCHDOG=1', ...(status !== this.#announced ? [`STATUS=${status}`] : [])]);
    this.#announced = status;
  }

  #now(): number {
    return this.#options.monotonicMs?.() ?? performance.now();
  }
}
