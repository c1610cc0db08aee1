import type { Clock } from '../../system/clock.js';

/**
 * Delivered rows are deleted in batches, not with every commit: a delete rewrites the pages it
 * touches just as an insert does, and online with fixes committed before their answer came, a
 * delete per second doubled the card's writes (bench:upload "online-after-commit"). A power cut
 * before the batch lands only means those fixes are sent again under the same event ids, which the
 * platform de-duplicates. Deletes are due after this long, or at this many, or at the bound.
 */
const DELETE_EVERY_MS = 30_000;
const DELETE_BATCH = 2_000;

/** When the outbox's next commit deletes the delivered rows. */
export class DeleteSchedule {
  readonly #clock: Clock;
  #lastDeleteMono = -Infinity;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** `overBound`: thinning must never count delivered rows, so at the bound they go first. */
  due(o: { force: boolean; delivered: number; overBound: boolean }): boolean {
    return o.force || o.delivered >= DELETE_BATCH || this.#clock.monotonicMs() - this.#lastDeleteMono >= DELETE_EVERY_MS || o.overBound;
  }

  deleted(): void {
    this.#lastDeleteMono = this.#clock.monotonicMs();
  }
}
