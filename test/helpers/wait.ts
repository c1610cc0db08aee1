/**
 * The one way tests wait for something that happens on its own time (a daemon, a child process, a
 * background loop): poll a condition, and fail with a message that names what was awaited once
 * `timeoutMs` has passed, well before the test's own timeout hides the cause.
 */
export interface WaitOptions {
  /** Default 30 s: generous for a loaded 2-core machine, shorter than vitest's testTimeout (60 s). */
  timeoutMs?: number;
  /** Time between checks. Default 20 ms. */
  intervalMs?: number;
  /** Appended to the timeout error (for example the tail of a daemon's log). */
  detail?: () => string;
  /** Also check at once whenever this source signals (for example every simulator request); returns an unsubscribe. */
  wakeOn?: (check: () => void) => () => void;
}

export async function waitFor(what: string, cond: () => boolean | Promise<boolean>, options: WaitOptions = {}): Promise<void> {
  const { timeoutMs = 30_000, intervalMs = 20, detail, wakeOn } = options;
  const deadline = performance.now() + timeoutMs;
  let wake: (() => void) | undefined;
  const off = wakeOn?.(() => wake?.());
  try {
    while (!(await cond())) {
      if (performance.now() > deadline) {
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${detail ? `\n${detail().slice(-3000)}` : ''}`);
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, intervalMs);
        wake = () => {
          clearTimeout(t);
          setImmediate(resolve);
        };
      });
      wake = undefined;
    }
  } finally {
    off?.();
  }
}
