import type { PlatformError } from '../errors.js';
import type { Logger } from '../log.js';
import type { PlatformResponse } from '../platform/contracts.js';
import { spreadMs } from '../retry/backoff.js';
import type { Clock, Timers } from '../system/clock.js';
import { judgeRefusal, namesEventField, SYSTEMIC_RUN } from './rejection-rule.js';
import { systemicHint } from './systemic-hint.js';
import type { QueueEntry, UploadQueue } from './upload-queue.js';
import type { Refusal, SystemicFault } from './upload-types.js';

/**
 * A 4xx refusal of a movement or engine event while the platform accepts positions is about the
 * event kind: nothing sent again would change it, so it is dead-lettered even when the answer
 * names no field (a platform that does not know the eventType may say so in any shape).
 */
function isVehicleEventRefusal(r: Refusal): boolean {
  return r.entry.eventType !== undefined && r.status >= 400 && r.status < 500;
}

export interface RefusalsOptions {
  queue: Pick<UploadQueue, 'deadLetter' | 'renumber'>;
  clock: Clock;
  timers: Timers;
  logger: Logger;
  /** The longest upload backoff: how long a held event waits (half to all of it, jittered). */
  maxBackoffMs: number;
  random: () => number;
  /** Called when a held event's wait is over (the uploader's pump). */
  wake: () => void;
}

/**
 * The uploader's refusal bookkeeping, the state side of the rejection rule (rejection-rule.ts):
 * refused events waiting for a verdict, the run of first refusals, events held for the longest
 * backoff, the dead-letter count and the systemic fault status reports. The uploader owns the
 * sending and the backoff; it tells this ledger of each refusal and acceptance.
 */
export class Refusals {
  readonly #options: RefusalsOptions;
  /** The current run of first refusals since the last acceptance. */
  #run = { count: 0, systemic: false };
  readonly #refused = new Map<number, Refusal>();
  /** Event ids refused at least once (this process): their further refusals are no evidence about the platform. */
  readonly #everRefused = new Set<string>();
  /** Refused events not shown to be at fault: sent again after the longest backoff (monotonic ms). */
  readonly #held = new Map<number, { entry: QueueEntry; notBefore: number }>();
  #heldTimer: unknown;
  #deadLettered = 0;
  #fault: SystemicFault | undefined;

  constructor(options: RefusalsOptions) {
    this.#options = options;
  }

  get deadLettered(): number {
    return this.#deadLettered;
  }

  /** Refused events kept queued: waiting for a verdict, or held for the longest backoff. */
  get held(): number {
    return this.#refused.size + this.#held.size;
  }

  #faultSinceMono = 0;

  get fault(): SystemicFault | undefined {
    return this.#fault;
  }

  /** The event is the ledger's, not the lanes', until the rejection rule sends it back. */
  has(seq: number): boolean {
    return this.#refused.has(seq) || this.#held.has(seq);
  }

  /**
   * The store swapped its database: the events set aside take the seqs it gave them, so the lanes
   * see them busy and a verdict reaches their row once; one it no longer holds is settled.
   */
  renumbered(): void {
    const queue = this.#options.queue;
    if (!queue.renumber) return;
    for (const [seq, r] of [...this.#refused]) {
      this.#refused.delete(seq);
      const entry = queue.renumber(r.entry);
      if (entry) this.#refused.set(entry.seq, { ...r, entry });
    }
    for (const [seq, h] of [...this.#held]) {
      this.#held.delete(seq);
      const entry = queue.renumber(h.entry);
      if (entry) this.#held.set(entry.seq, { ...h, entry });
    }
  }

  stop(): void {
    if (this.#heldTimer) this.#options.timers.clearTimeout(this.#heldTimer);
  }

  /**
   * A refusal: set the event aside and count the run. True when the run is systemic (the platform
   * refuses everything): the fault is set, and the uploader probes one at a time.
   */
  refused(answered: QueueEntry, response: PlatformResponse, error: PlatformError | undefined): boolean {
    // Sent before a swap, answered after it: kept under the seq its row has now.
    const entry = this.#options.queue.renumber?.(answered) ?? answered;
    // A platform that does not take movement or engine events refuses only those: no evidence that
    // it refuses everything, so they never make a systemic run that would hold back the positions.
    const first = !this.#everRefused.has(entry.eventId) && entry.eventType === undefined;
    this.#everRefused.add(entry.eventId);
    if (first) this.#run.count++;
    this.#refused.set(entry.seq, {
      entry,
      namesField: namesEventField(response.body),
      status: response.status,
      reason: error?.message ?? `HTTP ${response.status}`,
      run: this.#run,
    });
    if (this.#run.count >= SYSTEMIC_RUN && !this.#run.systemic) {
      this.#run.systemic = true;
      this.#options.logger.error(
        { status: response.status, refusals: this.#run.count, platformMessage: error?.details?.platformMessage },
        `the platform refuses every event: keeping all ${this.#refused.size} refused events queued and probing every ${Math.round(this.#options.maxBackoffMs / 2000)} to ${Math.round(this.#options.maxBackoffMs / 1000)} s (jittered)`,
      );
    }
    if (this.#run.systemic) this.setFault('refuses-everything', response.status, error);
    return this.#run.systemic;
  }

  /** The event was delivered: a refusal of it before is forgotten. */
  delivered(entry: QueueEntry): void {
    this.#everRefused.delete(entry.eventId);
  }

  /**
   * An acceptance: the fault and the run of refusals are over, and the refusals before it are
   * judged. Returns the events to send again at once.
   */
  accepted(): QueueEntry[] {
    if (this.#fault) {
      this.#options.logger.info({ status: this.#fault.status }, 'the platform accepts events again: uploading at full speed');
      this.#fault = undefined;
    }
    this.#run = { count: 0, systemic: false };
    if (this.#refused.size === 0) return [];
    const refusals = [...this.#refused.values()];
    this.#refused.clear();
    const again: QueueEntry[] = [];
    for (const r of refusals) {
      const verdict = judgeRefusal({
        namesField: r.namesField || isVehicleEventRefusal(r),
        systemic: r.run.systemic,
        acceptedSince: true,
      });
      if (verdict === 'dead-letter' && r.entry.eventType !== undefined) {
        this.#options.queue.deadLetter(r.entry, r.status, r.reason);
        this.#everRefused.delete(r.entry.eventId);
        this.#deadLettered++;
        this.#vehicleEventRefused(r);
      } else if (verdict === 'dead-letter') {
        this.#options.queue.deadLetter(r.entry, r.status, r.reason);
        this.#everRefused.delete(r.entry.eventId);
        this.#deadLettered++;
        this.#options.logger.warn(
          { eventId: r.entry.eventId, fixTime: new Date(r.entry.time).toISOString(), status: r.status, reason: r.reason },
          'platform refused this event for its own fault while accepting others: moved to the dead letters',
        );
      } else if (verdict === 'hold') {
        const notBefore = this.#options.clock.monotonicMs() + spreadMs(this.#options.maxBackoffMs, this.#options.random());
        this.#held.set(r.entry.seq, { entry: r.entry, notBefore });
      } else again.push(r.entry);
    }
    return again;
  }

  /** One line a process for refused vehicle events (a platform that does not take them refuses each one). */
  #vehicleEventRefused(r: Refusal): void {
    const fields = { eventType: r.entry.eventType, eventId: r.entry.eventId, status: r.status, reason: r.reason };
    if (this.#vehicleEventsLogged) return this.#options.logger.debug(fields, 'vehicle event refused: moved to the dead letters');
    this.#vehicleEventsLogged = true;
    this.#options.logger.warn(
      fields,
      'the platform refuses movement/engine events while accepting positions: moving them to the dead letters (motion.enabled false stops making them)',
    );
  }

  #vehicleEventsLogged = false;

  /** A held event whose wait is over (taken out of the ledger), and a wake-up for the next one. */
  dueHeld(now: number): QueueEntry | undefined {
    let next = Infinity;
    for (const [seq, h] of this.#held) {
      if (h.notBefore <= now) {
        this.#held.delete(seq);
        return h.entry;
      }
      next = Math.min(next, h.notBefore);
    }
    if (next !== Infinity && !this.#heldTimer) {
      this.#heldTimer = this.#options.timers.setTimeout(
        () => {
          this.#heldTimer = undefined;
          this.#options.wake();
        },
        Math.max(1, Math.ceil(next - now)),
      );
    }
    return undefined;
  }

  /** The platform refuses every event the same way: a configuration status or a systemic run. */
  setFault(kind: SystemicFault['kind'], status: number, error: PlatformError | undefined): void {
    if (this.#fault && this.#fault.status === status && this.#fault.kind === kind) return;
    this.#fault = {
      kind,
      status,
      code: error?.code ?? 'PLATFORM_HTTP_ERROR',
      message: error?.message ?? `event upload: HTTP ${status}`,
      hint: systemicHint(kind, status),
      since: this.#options.clock.wallMs(),
    };
    this.#faultSinceMono = this.#options.clock.monotonicMs();
  }

  /** Monotonic ms the current fault began (status measures its age on it). */
  get faultSinceMonoMs(): number {
    return this.#faultSinceMono;
  }
}
