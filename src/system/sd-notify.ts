import { spawn } from 'node:child_process';
import type { Logger } from '../log.js';
import { errorFields } from '../errors.js';

/**
 * sd_notify(3) without native code. Node has no AF_UNIX datagram sockets (net only does streams),
 * and an addon would need a compiler on the gateway, so the daemon spawns systemd's own
 * `systemd-notify` (always present where NOTIFY_SOCKET is set, i.e. under systemd). Two details:
 * - the sender is a child, not the main PID: the unit says NotifyAccess=all (systemd/ unit);
 * - systemd 246+ `systemd-notify` waits on a barrier until the manager has read the message, so
 *   the old race (helper gone before systemd looks up its cgroup: message dropped) cannot happen.
 * The spawn is fire-and-forget with a deadline; without NOTIFY_SOCKET everything is a no-op.
 */
export interface SdNotifyOptions {
  env: NodeJS.ProcessEnv;
  logger: Logger;
  /** The helper; default `systemd-notify` from PATH. */
  command?: string;
  /** Kill a helper that has not finished after this long. */
  timeoutMs?: number;
}

export class SdNotify {
  readonly #options: SdNotifyOptions;
  #warned = false;
  readonly #children = new Set<Promise<void>>();

  constructor(options: SdNotifyOptions) {
    this.#options = options;
  }

  get enabled(): boolean {
    return Boolean(this.#options.env.NOTIFY_SOCKET);
  }

  /**
   * Half of WATCHDOG_USEC (systemd's advice), when the watchdog is on for this process; else
   * undefined.
   */
  watchdogIntervalMs(pid: number = process.pid): number | undefined {
    const usec = Number(this.#options.env.WATCHDOG_USEC);
    if (!this.enabled || !Number.isFinite(usec) || usec <= 0) return undefined;
    const forPid = this.#options.env.WATCHDOG_PID;
    if (forPid !== undefined && forPid !== '' && Number(forPid) !== pid) return undefined;
    return Math.max(100, Math.floor(usec / 1000 / 2));
  }

  ready(status?: string): void {
    this.send(['READY=1', ...(status ? [`STATUS=${status}`] : [])]);
  }

  watchdog(): void {
    this.send(['WATCHDOG=1']);
  }

  stopping(): void {
    this.send(['STOPPING=1']);
  }

  /** Sends `assignments` (e.g. ["READY=1", "STATUS=..."]) as one message. */
  send(assignments: string[]): void {
    const socket = this.#options.env.NOTIFY_SOCKET;
    if (!socket) return;
    const done = new Promise<void>((resolve) => {
      const child = spawn(this.#options.command ?? 'systemd-notify', assignments, {
        stdio: 'ignore',
        env: { PATH: this.#options.env.PATH ?? '/usr/bin:/bin', NOTIFY_SOCKET: socket },
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), this.#options.timeoutMs ?? 10_000);
      timer.unref();
      child.once('error', (e) => {
        clearTimeout(timer);
        if (!this.#warned) {
          this.#warned = true;
          this.#options.logger.warn(
            { err: errorFields(e) },
            'cannot run systemd-notify: systemd will not see READY=1/WATCHDOG=1 (install systemd or run without Type=notify)',
          );
        }
        resolve();
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        if (code !== 0 && code !== null) this.#options.logger.debug({ code, assignments }, 'systemd-notify failed');
        resolve();
      });
    });
    this.#children.add(done);
    void done.then(() => this.#children.delete(done));
  }

  /** Waits for helpers still running (at shutdown, so STOPPING=1 is out before the process ends). */
  async flush(timeoutMs = 2000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all([...this.#children]), new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)))]);
    clearTimeout(timer);
  }
}
