import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Logger } from '../log.js';
import { backoffMs, type BackoffPolicy } from '../retry/backoff.js';
import type { Clock, Timers } from '../system/clock.js';
import { IgnitionDebounce } from './ignition-debounce.js';
import {
  explainGpiodFailure,
  GPIOD_TOOLS,
  gpiomonArgs,
  parseGpiomonLine,
  readGpioLine,
  type GpiodTools,
  type GpioLine,
} from './gpiod-tools.js';

export interface GpioIgnitionOptions extends GpioLine {
  debounceS: number;
  clock: Clock;
  timers: Timers;
  logger: Logger;
  /** The tools' paths (default on PATH); tests point them at executables that print the same. */
  tools?: GpiodTools;
  /** Between restarts of gpiomon (default 1 s doubling to 60 s, equal jitter). */
  backoff?: BackoffPolicy;
  random?: () => number;
  /** A debounced change (the first reading too): on or off, and the monotonic ms it began. */
  onChange: (on: boolean, monoMs: number) => void;
}

/** A gpiomon that ran this long before it ended was working: the next start is quick again. */
const HEALTHY_RUN_MS = 60_000;
/** More ends of a running gpiomon than this within RESTART_WINDOW_MS: it is unstable, not restarted now and then. */
export const MAX_RESTARTS = 3;
export const RESTART_WINDOW_MS = 10 * 60_000;
const STDERR_KEPT = 4096;

/**
 * The ignition from a GPIO line through the character device (ignition.gpio): the state read with
 * gpioget at start, then every edge from a gpiomon child (the kernel wakes it; nothing polls). The
 * line can be held by one requester at a time, so gpioget runs before gpiomon: an edge in the few
 * milliseconds between is missed until the next one. gpiomon is restarted with backoff whenever it
 * ends, and why it ended is said in one sentence, once per spell of the same fault: a restart that
 * works at once is that one line. A gpiomon that keeps ending (more than MAX_RESTARTS in
 * RESTART_WINDOW_MS) makes the input unstable: edges are missed while it restarts.
 */
export class GpioIgnitionInput {
  readonly #options: GpioIgnitionOptions;
  readonly #debounce: IgnitionDebounce;
  #stopped = true;
  #child: ChildProcess | undefined;
  #timer: unknown;
  #attempts = 0;
  #lastFault: string | undefined;
  #watching = false;
  #edges = 0;
  /** Failed attempts since gpiomon last held the line. */
  #spellFailures = 0;
  /** Monotonic ms of each end of a gpiomon that had held the line, within RESTART_WINDOW_MS. */
  #restarts: number[] = [];
  #lastEnd: string | undefined;

  constructor(options: GpioIgnitionOptions) {
    this.#options = options;
    this.#debounce = new IgnitionDebounce(options);
  }

  get state(): boolean | undefined {
    return this.#debounce.state;
  }

  /** Whether gpiomon holds the line now (its banner came and it has not ended). */
  get watching(): boolean {
    return this.#watching;
  }

  /** Why the line is not watched now (the last failure, until gpiomon holds the line again). */
  fault(): string | undefined {
    return this.#lastFault;
  }

  /** Why engine events are held or edges missed now: the line flaps, or gpiomon keeps ending. */
  unstable(): string | undefined {
    const flapping = this.#debounce.unstable();
    if (flapping) return flapping;
    const n = this.#recentRestarts();
    if (n <= MAX_RESTARTS) return undefined;
    return `ignition input unstable: gpiomon ended ${n} times in the last ${RESTART_WINDOW_MS / 60_000} min (last: ${this.#lastEnd}); edges are missed while it restarts`;
  }

  #recentRestarts(): number {
    const now = this.#options.clock.monotonicMs();
    this.#restarts = this.#restarts.filter((t) => now - t < RESTART_WINDOW_MS);
    return this.#restarts.length;
  }

  /** Edges gpiomon has reported since the start, before the debounce. */
  get edges(): number {
    return this.#edges;
  }

  async start(): Promise<void> {
    this.#stopped = false;
    await this.#run();
  }

  stop(): void {
    this.#stopped = true;
    this.#debounce.stop();
    if (this.#timer !== undefined) this.#options.timers.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#child?.kill('SIGTERM');
    this.#child = undefined;
    this.#watching = false;
  }

  async #run(): Promise<void> {
    this.#timer = undefined;
    if (this.#stopped) return;
    const tools = this.#options.tools ?? GPIOD_TOOLS;
    try {
      const on = await readGpioLine(this.#options, tools);
      if (this.#stopped) return;
      this.#debounce.reading(on, this.#options.clock.monotonicMs());
    } catch (e) {
      return this.#failed((e as Error).message);
    }
    const startedAt = this.#options.clock.monotonicMs();
    const child = spawn(tools.gpiomon, gpiomonArgs(this.#options), { stdio: ['ignore', 'pipe', 'pipe'] });
    this.#child = child;
    let stderr = '';
    let spawnError: NodeJS.ErrnoException | undefined;
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      if (stderr.length < STDERR_KEPT) stderr += chunk;
    });
    createInterface({ input: child.stdout }).on('line', (text) => {
      if (this.#child !== child) return;
      const seen = parseGpiomonLine(text);
      if (seen === 'banner') return this.#requested();
      if (seen === undefined) return;
      this.#edges++;
      this.#debounce.reading(seen, this.#options.clock.monotonicMs());
    });
    child.on('error', (e: NodeJS.ErrnoException) => {
      spawnError = e;
    });
    child.on('close', (code, signal) => {
      if (this.#child !== child) return;
      this.#child = undefined;
      const now = this.#options.clock.monotonicMs();
      if (now - startedAt >= HEALTHY_RUN_MS) this.#attempts = 0;
      const end = spawnError ? { stderr, spawnError } : { stderr, code, signal };
      const reason = explainGpiodFailure('gpiomon', this.#options, end);
      if (this.#watching) {
        this.#restarts.push(now);
        this.#lastEnd = reason;
      }
      this.#watching = false;
      this.#failed(reason);
    });
  }

  #requested(): void {
    this.#watching = true;
    const where = { chip: this.#options.chip, line: this.#options.line };
    // A restart that worked at once was said by its one failure line ("retrying"); a longer spell ends with a word.
    if (this.#spellFailures > 1) this.#options.logger.info(where, 'ignition gpio line watched again');
    else if (this.#lastFault === undefined && this.#attempts === 0)
      this.#options.logger.info(where, 'ignition gpio line watched (gpiomon)');
    this.#lastFault = undefined;
    this.#spellFailures = 0;
  }

  #failed(reason: string): void {
    if (this.#stopped) return;
    this.#attempts++;
    this.#spellFailures++;
    const delay = backoffMs(
      this.#attempts,
      this.#options.backoff ?? { minMs: 1000, maxMs: 60_000 },
      (this.#options.random ?? Math.random)(),
    );
    // Once per spell of the same fault: a chip missing for an hour is one fact, not a line a minute.
    if (reason !== this.#lastFault)
      this.#options.logger.warn(
        { chip: this.#options.chip, line: this.#options.line, err: reason, retryInMs: delay, restartsIn10Min: this.#recentRestarts() },
        'ignition gpio input failed: engine state kept, retrying',
      );
    this.#lastFault = reason;
    this.#timer = this.#options.timers.setTimeout(() => void this.#run(), delay);
  }
}
