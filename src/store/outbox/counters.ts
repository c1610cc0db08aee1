import type { Clock } from '../../system/clock.js';
import type { MetaStore } from '../meta.js';

/**
 * Outbox and delivery counters for status. Totals live in the `counters` table; increments are
 * kept in memory and written with a commit at most once a minute (or with thinning, or at stop),
 * because a counters write every second would add a page per commit to the SD card's load. A
 * crash can lose up to a minute of "sent" counts, never a fix.
 */
export interface OutboxCounterSnapshot {
  sentTotal: number;
  /** Delivered since 00:00 UTC of the host clock's day (display only). */
  sentToday: number;
  thinned: number;
  deadLetters: number;
  /** Fixes the pipeline handed over without a position (not queued). */
  noPosition: number;
  /** Vehicle events the outbox could not queue (no usable place or time): never sent, so said in status. */
  eventsRefused: number;
  diskFullEvents: number;
}

export const COUNTER = {
  sent: 'upload.sent',
  thinned: 'outbox.thinned',
  noPosition: 'outbox.noPosition',
  eventsRefused: 'outbox.eventsRefused',
  diskFull: 'outbox.diskFull',
} as const;

/** Meta keys written with the counters (status reads them when the daemon is down). */
export const DELIVERY_META = { sentToday: 'upload.sentToday', lastSuccessAt: 'upload.lastSuccessAt' } as const;
const PERSIST_EVERY_MS = 60_000;

export class OutboxCounters {
  readonly #meta: MetaStore;
  readonly #clock: Clock;
  readonly #totals = new Map<string, number>();
  readonly #unsaved = new Map<string, number>();
  #today = { day: '', count: 0 };
  /** Wall ms range of #today.day, so that a delivery does not format a date. */
  #dayRange = { from: 0, to: -1 };
  #todayDirty = false;
  /** Wall ms of the newest delivery (display only: "last success" after a crash). */
  #lastSentAt: number | undefined;
  #deadLetters = 0;
  #lastPersist: number;
  readonly #alsoWrite: ((meta: MetaStore) => void) | undefined;

  /** `alsoWrite`: other display counters that ride along with each write (the platform data counter). */
  constructor(meta: MetaStore, clock: Clock, alsoWrite?: (meta: MetaStore) => void) {
    this.#meta = meta;
    this.#clock = clock;
    this.#alsoWrite = alsoWrite;
    this.#lastPersist = clock.monotonicMs();
  }

  load(deadLetters: number): void {
    for (const name of Object.values(COUNTER)) this.#totals.set(name, this.#meta.counter(name));
    this.#today = this.#meta.getJson<{ day: string; count: number }>(DELIVERY_META.sentToday) ?? { day: '', count: 0 };
    this.#deadLetters = deadLetters;
  }

  add(name: string, by = 1): void {
    if (by === 0) return;
    this.#totals.set(name, (this.#totals.get(name) ?? 0) + by);
    this.#unsaved.set(name, (this.#unsaved.get(name) ?? 0) + by);
  }

  /** An increment the caller already wrote to the counters table in its own transaction. */
  addSaved(name: string, by: number): void {
    this.#totals.set(name, (this.#totals.get(name) ?? 0) + by);
  }

  sent(wallMs: number): void {
    this.add(COUNTER.sent);
    this.#lastSentAt = wallMs;
    if (wallMs < this.#dayRange.from || wallMs >= this.#dayRange.to) {
      const day = new Date(wallMs).toISOString().slice(0, 10);
      const from = Date.parse(`${day}T00:00:00Z`);
      this.#dayRange = { from, to: from + 86_400_000 };
      if (day !== this.#today.day) this.#today = { day, count: 0 };
    }
    this.#today.count++;
    this.#todayDirty = true;
  }

  setDeadLetters(n: number): void {
    this.#deadLetters = n;
  }

  duePersist(): boolean {
    return (this.#unsaved.size > 0 || this.#todayDirty) && this.#clock.monotonicMs() - this.#lastPersist >= PERSIST_EVERY_MS;
  }

  /**
   * Writes the unsaved increments (call inside the caller's transaction) and returns what to call
   * once that transaction has committed.
   */
  write(): () => void {
    const written = new Map(this.#unsaved);
    for (const [name, by] of written) this.#meta.increment(name, by);
    if (this.#todayDirty) {
      this.#meta.setJson(DELIVERY_META.sentToday, this.#today);
      // Rides along with the same minute's write, so that a power cut leaves status a last success
      // at most a minute old instead of that of the last clean stop.
      if (this.#lastSentAt !== undefined) this.#meta.set(DELIVERY_META.lastSuccessAt, String(this.#lastSentAt));
    }
    this.#alsoWrite?.(this.#meta);
    return () => {
      for (const [name, by] of written) {
        const left = (this.#unsaved.get(name) ?? 0) - by;
        if (left === 0) this.#unsaved.delete(name);
        else this.#unsaved.set(name, left);
      }
      this.#todayDirty = false;
      this.#lastPersist = this.#clock.monotonicMs();
    };
  }

  snapshot(): OutboxCounterSnapshot {
    const today = new Date(this.#clock.wallMs()).toISOString().slice(0, 10);
    return {
      sentTotal: this.#totals.get(COUNTER.sent) ?? 0,
      sentToday: this.#today.day === today ? this.#today.count : 0,
      thinned: this.#totals.get(COUNTER.thinned) ?? 0,
      deadLetters: this.#deadLetters,
      noPosition: this.#totals.get(COUNTER.noPosition) ?? 0,
      eventsRefused: this.#totals.get(COUNTER.eventsRefused) ?? 0,
      diskFullEvents: this.#totals.get(COUNTER.diskFull) ?? 0,
    };
  }
}
