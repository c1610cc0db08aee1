import type { Clock } from '../../system/clock.js';

/**
 * Whether the platform answers: every exchange of PlatformHttp, whichever service
 * and whatever for (events, token, registration), reports here. A parked vehicle with an empty
 * outbox sends nothing for up to `recording.parkedHeartbeatS`, so "no upload error" says nothing
 * about the link; this says when the platform last answered and, while the newest attempt
 * failed, since when and why. Ages are on the monotonic clock; wall times are for display only.
 */
export interface ContactObserver {
  /** The platform answered (2xx, or a 4xx that only a reached platform gives). */
  answered(): void;
  /**
   * No usable answer: network error, timeout, 5xx, 429, a proxy's page. The message names what and
   * why, never a secret; the code is the error's (PLATFORM_TLS_CLOCK: health blames the clock);
   * `status` when the platform did answer, with an HTTP error (503: it answers, but takes nothing).
   */
  failed(message: string, code?: string, status?: number): void;
}

export interface PlatformContactView {
  /** Monotonic ms since the platform last answered; absent before its first answer in this run. */
  lastAnswerAgeMs?: number;
  /** Wall ms of that answer (display only). */
  lastAnswerWallMs?: number;
  /** The newest attempt failed: its error, and since the first failure after the last answer. */
  failing?: { message: string; forMs: number; sinceWallMs: number; code?: string; status?: number };
}

export class PlatformContact implements ContactObserver {
  readonly #clock: Pick<Clock, 'monotonicMs' | 'wallMs'>;
  #answer: { mono: number; wall: number } | undefined;
  #failing: { message: string; sinceMono: number; sinceWall: number; code: string | undefined; status: number | undefined } | undefined;

  constructor(clock: Pick<Clock, 'monotonicMs' | 'wallMs'>) {
    this.#clock = clock;
  }

  answered(): void {
    this.#answer = { mono: this.#clock.monotonicMs(), wall: this.#clock.wallMs() };
    this.#failing = undefined;
  }

  failed(message: string, code?: string, status?: number): void {
    if (this.#failing) {
      this.#failing.message = message;
      this.#failing.code = code;
      this.#failing.status = status;
    } else this.#failing = { message, sinceMono: this.#clock.monotonicMs(), sinceWall: this.#clock.wallMs(), code, status };
  }

  view(): PlatformContactView {
    const now = this.#clock.monotonicMs();
    const v: PlatformContactView = {};
    if (this.#answer) {
      v.lastAnswerAgeMs = Math.max(0, now - this.#answer.mono);
      v.lastAnswerWallMs = this.#answer.wall;
    }
    if (this.#failing)
      v.failing = {
        message: this.#failing.message,
        forMs: Math.max(0, now - this.#failing.sinceMono),
        sinceWallMs: this.#failing.sinceWall,
        ...(this.#failing.code !== undefined ? { code: this.#failing.code } : {}),
        ...(this.#failing.status !== undefined ? { status: this.#failing.status } : {}),
      };
    return v;
  }
}
