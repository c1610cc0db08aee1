import type { Logger } from '../log.js';
import type { FixSink, RecordedFix } from './fix.js';
import { MAX_HELD_HEAP_BYTES, WAITING_FIX_HEAP_BYTES } from './held-memory.js';

/**
 * The receiver's fixes go to the outbox of the moment (agent.ts). While the components restart on
 * another database (a salvage, a card that became writable) the receiver keeps being
 * read and its fixes wait here, so a restart of the store loses none of them. The wait is the time
 * the uploader's grace takes (seconds); the bound, the held-memory budget's bytes (16,384 fixes),
 * is only a guard.
 */
export const MAX_WAITING_FIXES = Math.floor(MAX_HELD_HEAP_BYTES / WAITING_FIX_HEAP_BYTES);

export class FixHandover implements FixSink {
  #target: FixSink | undefined;
  readonly #waiting: RecordedFix[] = [];
  #dropped = 0;
  #droppedLogged = 0;
  readonly #logger: Pick<Logger, 'error'> | undefined;

  constructor(logger?: Pick<Logger, 'error'>) {
    this.#logger = logger;
  }

  /** Hands what waited to `target`, then every new fix; says how many did not fit since the last time. */
  attach(target: FixSink): void {
    this.#target = target;
    const dropped = this.#dropped - this.#droppedLogged;
    if (dropped > 0) {
      this.#droppedLogged = this.#dropped;
      this.#logger?.error(
        { dropped, waiting: this.#waiting.length, max: MAX_WAITING_FIXES },
        'fixes dropped while the store restarted: more than the hand-over holds waited for an outbox',
      );
    }
    for (const fix of this.#waiting.splice(0)) target.record(fix);
  }

  detach(): void {
    this.#target = undefined;
  }

  /** Fixes that did not fit while no outbox took them. */
  get dropped(): number {
    return this.#dropped;
  }

  record(fix: RecordedFix): void {
    if (this.#target) this.#target.record(fix);
    else if (this.#waiting.length < MAX_WAITING_FIXES) this.#waiting.push(fix);
    else this.#dropped++;
  }
}
