import type { RegisteredDevice } from '../platform/contracts.js';
import type { QueueEntry } from './upload-queue.js';
import { systemTimers, type Timers } from '../system/clock.js';
import { UPLOAD_BACKOFF, type UploadBackoff } from './retry-decision.js';
import { UploadLanes, type Lane } from './lanes.js';
import { BacklogPacer } from './backlog-pacer.js';
import { DrainMeter } from './drain-meter.js';
import type { UploaderOptions, UploaderStatus } from './upload-types.js';
import { OversizedAnswers } from './oversized-answers.js';
import { Refusals } from './refusals.js';
import { sendEvent } from './event-request.js';
import { AnswerHandler } from './answers.js';
import { UploadHealth } from './upload-health.js';
import { InFlightRequests } from './in-flight-requests.js';
import { uploaderStatus } from './uploader-status.js';

export type { SystemicFault, UploadError, UploaderOptions, UploaderStatus } from './upload-types.js';

/**
 * Delivers queued fixes as OTM5 events, one `PUT {planningUrl}{eventsPath}` each (docs/platform-contract.md),
 * through the AuthorizedRequester (bearer, one refresh and retry on 401), at most upload.concurrency
 * at once. The lanes (lanes.ts) pick what goes next; decideUpload (retry-decision.ts) what an answer
 * means, and answers.ts acts on it. While failing, one request probes at a time after each backoff,
 * so a 5xx storm costs one request per backoff step. Nothing is sent before the device is registered.
 */
export class Uploader {
  readonly #options: UploaderOptions;
  readonly #lanes: UploadLanes;
  /** The requests in flight, and the ids a swap left in flight (in-flight-requests.ts). */
  readonly #inFlight = new InFlightRequests();
  #abort = new AbortController();
  #device: RegisteredDevice | undefined;
  #running = false;
  #stopping = false;
  /** Failures in a row, the backoff's hold, the last success and error (upload-health.ts). */
  readonly #health: UploadHealth;
  readonly #oversized: OversizedAnswers;
  /** Refused events, held events and the systemic fault (the rejection rule's state). */
  readonly #refusals: Refusals;
  /** What an answer does to the queue, the lanes, the drain and the backoff (answers.ts). */
  readonly #answers: AnswerHandler;
  readonly #timers: Timers;
  readonly #backoff: UploadBackoff;
  /** upload.backlogMaxRatePerS: an optional rate ceiling over the adaptive window. */
  readonly #pacer: BacklogPacer;
  #paceTimer: unknown;
  /** The backlog's window (drain-controller.ts) and its figures for status. */
  readonly #drain: DrainMeter;
  /** When the last backlog request went out (monotonic ms). */
  #lastBacklogAt = -Infinity;
  /** Since when fixes wait with no event settled (monotonic ms); undefined while nothing waits. */
  #waitingSince: number | undefined;

  constructor(options: UploaderOptions) {
    this.#options = options;
    this.#backoff = options.backoff ?? UPLOAD_BACKOFF;
    this.#timers = options.timers ?? systemTimers;
    this.#lanes = new UploadLanes(options.queue, options.upload.order, () => {
      this.#inFlight.renumbered();
      this.#refusals.renumbered();
    });
    this.#pacer = new BacklogPacer(options.upload.backlogMaxRatePerS ?? 0, options.clock.monotonicMs());
    this.#drain = new DrainMeter({
      // One request of upload.concurrency is kept for the live lane.
      ceiling: Math.max(1, options.upload.concurrency - 1),
      targetMs: options.upload.latencyTargetMs,
      baseHistoryMin: 10,
    });
    this.#oversized = new OversizedAnswers(options.logger, options.clock);
    this.#health = new UploadHealth({ clock: options.clock, timers: this.#timers, logger: options.logger, wake: () => this.#pump() });
    this.#refusals = new Refusals({
      queue: options.queue,
      clock: options.clock,
      timers: this.#timers,
      logger: options.logger,
      maxBackoffMs: this.#backoff.maxBackoffMs,
      random: () => this.#random(),
      wake: () => this.#pump(),
    });
    this.#answers = new AnswerHandler({
      queue: options.queue,
      logger: options.logger,
      lanes: this.#lanes,
      drain: this.#drain,
      health: this.#health,
      refusals: this.#refusals,
      inFlight: this.#inFlight,
      backoff: this.#backoff,
      random: () => this.#random(),
      settled: (atMs) => (this.#waitingSince = atMs),
    });
  }

  async start(): Promise<void> {
    this.#abort = new AbortController();
    this.#running = true;
    this.#stopping = false;
    this.#options.queue.onChange(() => this.#pump());
    this.#options.registration.whenRegistered(this.#abort.signal).then(
      (device) => {
        this.#device = device;
        this.#options.logger.info({ deviceUUID: device.deviceUUID }, 'device registered: uploading queued fixes');
        this.#pump();
      },
      () => undefined, // stopped before registration
    );
  }

  /** Stops sending; in-flight requests get `graceMs` to finish, then are abandoned (they stay queued). */
  async stop(graceMs = 3000): Promise<void> {
    this.#stopping = true;
    this.#health.stop();
    this.#refusals.stop();
    if (this.#paceTimer) this.#timers.clearTimeout(this.#paceTimer);
    await this.#inFlight.finish(graceMs, () => this.#abort.abort());
    this.#running = false;
  }

  status(): UploaderStatus {
    const now = this.#options.clock.monotonicMs();
    return uploaderStatus(now, {
      running: this.#running,
      registered: !!this.#device,
      order: this.#options.upload.order,
      inFlight: this.#inFlight,
      lanes: this.#lanes,
      drain: this.#drain.status(now, this.#slots(), this.#pacer.paced ? this.#options.upload.backlogMaxRatePerS : undefined),
      refusals: this.#refusals,
      health: this.#health,
      waitingSince: this.#waitingSince,
    });
  }

  /**
   * Requests the transport runs at once: upload.concurrency, and over HTTP/1.1 no more than
   * platform.maxConnections (beyond that they would queue in the dispatcher, the live fix behind
   * the backlog's).
   */
  #slots(): number {
    return Math.max(1, Math.min(this.#options.upload.concurrency, this.#options.slots?.() ?? Infinity));
  }

  #pump(): void {
    if (!this.#running || this.#stopping || !this.#device) return;
    const now = this.#options.clock.monotonicMs();
    if (now < this.#health.resumeAt) {
      // A timer may fire a little before the clock agrees; never let the queue stall on that.
      this.#health.wakeIn(this.#health.resumeAt - now);
      return;
    }
    // While failing, or while the platform refuses streams, probe with one request at a time.
    const probing = this.#health.failures > 0 || this.#health.streamsRefused;
    const slots = this.#slots();
    // Refused events are the uploader's, not the lanes', until the rejection rule sends them back.
    const busy = (e: QueueEntry) => this.#inFlight.has(e.seq) || this.#refusals.has(e.seq) || this.#inFlight.isStale(e.eventId);
    for (;;) {
      if (probing && this.#inFlight.size >= 1) return;
      const live = this.#lanes.liveInFlight;
      // The live lane first, never held behind the backlog: the backlog leaves it a slot.
      if (this.#inFlight.size < slots) {
        const entry = this.#lanes.nextLive(busy);
        if (entry) {
          this.#dispatch(entry, 'live', false);
          continue;
        }
      }
      // The backlog: its window (drain-controller.ts), one slot kept free for the live lane (with a
      // single slot, the backlog has it while no live fix is in flight).
      const backlog = this.#inFlight.size - live;
      const room = slots > 1 ? slots - 1 - live : 1 - live;
      const allowed = probing ? 1 : Math.min(this.#drain.allowance(), room);
      if (backlog >= allowed) return;
      const limited = backlog + 1 >= allowed;
      const held = this.#refusals.dueHeld(now);
      if (held) {
        this.#dispatch(held, 'backlog', limited);
        continue;
      }
      // Below a window of one, a pause between backlog requests (drain-controller.ts).
      const gapWaitMs = this.#lastBacklogAt + this.#drain.gapMs() - now;
      if (!probing && gapWaitMs > 0) {
        this.#schedulePace(gapWaitMs);
        return;
      }
      // upload.backlogMaxRatePerS, when set, is a ceiling over the window.
      const paceWaitMs = this.#pacer.take(now);
      if (paceWaitMs > 0) {
        this.#schedulePace(paceWaitMs);
        return;
      }
      const entry = this.#lanes.nextBacklog(busy);
      if (!entry) {
        // Nothing waits (a refused event held for later is the fault's finding, not a stall).
        if (this.#inFlight.size === 0) this.#waitingSince = undefined;
        this.#pacer.giveBack();
        return;
      }
      this.#dispatch(entry, 'backlog', limited);
    }
  }

  /** Wakes the pump when the backlog pacer has a send again (one timer at a time). */
  #schedulePace(delayMs: number): void {
    if (this.#paceTimer) return;
    this.#paceTimer = this.#timers.setTimeout(() => {
      this.#paceTimer = undefined;
      this.#pump();
    }, delayMs);
  }

  /** `limited`: the backlog's window was full with this one (its answer may grow the window). */
  #dispatch(entry: QueueEntry, lane: Lane, limited: boolean): void {
    const startedAt = this.#options.clock.monotonicMs();
    if (lane === 'backlog') this.#lastBacklogAt = startedAt;
    this.#waitingSince ??= startedAt;
    const promise = this.#send(entry, lane, startedAt, limited).finally(() => {
      if (this.#inFlight.settled(entry)) this.#lanes.startOver();
      this.#pump();
    });
    this.#inFlight.set(entry.seq, { lane, eventId: entry.eventId, promise, startedAt, limited });
  }

  async #send(entry: QueueEntry, lane: Lane, startedAt: number, limited: boolean): Promise<void> {
    const device = this.#options.registration.current() ?? this.#device!;
    // A probe's failure is the outage the backoff paces; the drain's sample is the exchange's own time.
    const probe = this.#health.failures > 0;
    let sentAt = startedAt;
    const attempt = await sendEvent(this.#options, entry, device, {
      signal: this.#abort.signal,
      oversized: this.#oversized,
      onSend: () => {
        sentAt = this.#options.clock.monotonicMs();
        const flight = this.#inFlight.get(entry.seq);
        if (flight) flight.sentAt = sentAt;
      },
    });
    if (this.#abort.signal.aborted && !attempt.response) {
      this.#answers.requeue(entry); // abandoned at shutdown: still queued, sent after the restart
      return;
    }
    this.#answers.take(entry, lane, attempt, { probe, limited, startedAt, sentAt, endedAt: this.#options.clock.monotonicMs() });
  }

  #random(): number {
    return (this.#options.random ?? Math.random)();
  }
}
