/**
 * Answers at most `perS` a second (with a burst), first come first served: a local client that
 * asks and closes as fast as it can (3,400 answers a second measured on a Pi-class core) made the
 * daemon write, allocate and drop that many Sockets and answers, which grew its heap by 70 MB.
 * Paced, each such client waits its turn like the technician; one that hangs up while waiting
 * gives its turn away instead of spending it.
 */
import { systemClock, type Clock } from '../system/clock.js';

export class AnswerPacer {
  readonly #perS: number;
  readonly #burst: number;
  readonly #clock: Pick<Clock, 'monotonicMs'>;
  #tokens: number;
  #atMs: number;
  readonly #waiting: { alive: () => boolean; go: (ok: boolean) => void }[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(perS: number, burst: number, clock: Pick<Clock, 'monotonicMs'> = systemClock) {
    this.#perS = perS;
    this.#burst = burst;
    this.#clock = clock;
    this.#tokens = burst;
    this.#atMs = clock.monotonicMs();
  }

  /** Clients waiting for their turn. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /**
   * Resolves true when it is this client's turn, or false once `alive` says it is gone (checked
   * when its turn comes) or the pacer is stopped.
   */
  turn(alive: () => boolean): Promise<boolean> {
    return new Promise((go) => {
      this.#waiting.push({ alive, go });
      this.#release();
    });
  }

  /** Every waiting client gets false. */
  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const w of this.#waiting.splice(0)) w.go(false);
  }

  #release(): void {
    const now = this.#clock.monotonicMs();
    this.#tokens = Math.min(this.#burst, this.#tokens + ((now - this.#atMs) * this.#perS) / 1000);
    this.#atMs = now;
    while (this.#waiting.length > 0) {
      const head = this.#waiting[0]!;
      if (!head.alive()) {
        this.#waiting.shift();
        head.go(false);
        continue;
      }
      if (this.#tokens < 1) break;
      this.#tokens -= 1;
      this.#waiting.shift();
      head.go(true);
    }
    if (this.#waiting.length > 0 && !this.#timer) {
      const waitMs = Math.max(1, ((1 - this.#tokens) * 1000) / this.#perS);
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        this.#release();
      }, waitMs);
      this.#timer.unref();
    }
  }
}
