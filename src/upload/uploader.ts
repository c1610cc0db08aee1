import { setTimeout as sleep } from 'node:timers/promises';
import { PlatformError, type ErrorClass, errorFields } from '../errors.js';
import type { PlatformResponse, RegisteredDevice } from '../platform/contracts.js';
import { errorFromResponse } from '../platform/transport/http-errors.js';
import { EVENT_REQUEST_HEADERS } from '../platform/otm5/event.js';
import { toOtmEvent } from '../platform/otm5/vehicle-event.js';
import type { QueueEntry } from './upload-queue.js';
import { systemTimers, type Timers } from '../system/clock.js';
import { decideUpload, UPLOAD_BACKOFF, type AttemptResult, type BackoffPolicy } from './retry-decision.js';
import { UploadLanes, type Lane } from './lanes.js';
import { BacklogPacer } from './backlog-pacer.js';
import { DrainMeter } from './drain-meter.js';
import { spreadMs } from '../retry/backoff.js';
import { uploadError, type UploadError, type UploaderOptions, type UploaderStatus } from './upload-types.js';
import { OversizedAnswers } from './oversized-answers.js';
import { Refusals } from './refusals.js';
import { ResumeGate } from './resume-gate.js';
import { waitingFor } from './waiting-for.js';

export type { UploadQueue } from './upload-queue.js';
export type { SystemicFault, UploadError, UploaderOptions, UploaderStatus } from './upload-types.js';

/** A request in flight; `sentAt`: when the exchange went out, after any wait for a token (monotonic ms). */
type Flight = { lane: Lane; eventId: string; promise: Promise<void>; startedAt: number; limited: boolean; sentAt?: number };

/**
 * Delivers queued fixes as OTM5 events, one `PUT {planningUrl}{eventsPath}` each (docs/platform-contract.md),
 * through the AuthorizedRequester (bearer, one refresh and retry on 401), at most upload.concurrency
 * at once. The lanes (lanes.ts) pick what goes next; decideUpload (retry-decision.ts) what an answer
 * means. While failing, one request probes at a time after each backoff, so a 5xx storm costs one
 * request per backoff step. Nothing is sent before the device is registered.
 */
export class Uploader {
  readonly #o: UploaderOptions;
  readonly #lanes: UploadLanes;
  readonly #inFlight = new Map<number, Flight>();
  /** Ids in flight when the seqs changed (a swap): their fix under a new seq waits, then the lanes start over. */
  #staleIds = new Set<string>();
  #abort = new AbortController();
  #device: RegisteredDevice | undefined;
  #running = false;
  #stopping = false;
  #failures = 0;
  /** The last attempt's stream was refused unprocessed: probe one at a time, without growing the backoff. */
  #streamsRefused = false;
  #lastFailureAt = -Infinity;
  /** The backoff's hold, which a clock set right ends at once. */
  readonly #resume: ResumeGate;
  #lastSuccessAt: number | undefined;
  /** Monotonic stamps beside the wall ones: status measures ages on them, immune to clock steps. */
  #lastSuccessMono: number | undefined;
  #lastErrorMono = 0;
  readonly #oversized: OversizedAnswers;
  #lastError: UploadError | undefined;
  /** Refused events, held events and the systemic fault (the rejection rule's state). */
  readonly #refusals: Refusals;
  readonly #timers: Timers;
  readonly #backoff: BackoffPolicy;
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
    this.#o = options;
    this.#backoff = options.backoff ?? UPLOAD_BACKOFF;
    this.#timers = options.timers ?? systemTimers;
    this.#lanes = new UploadLanes(options.queue, options.upload.order, () => {
      this.#staleIds = new Set([...this.#inFlight.values()].map((f) => f.eventId));
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
    this.#resume = new ResumeGate({
      clock: options.clock,
      timers: this.#timers,
      logger: options.logger,
      wake: () => this.#pump(),
      // The failures were the clock's: the next one is a first again (still one probe at a time).
      onClockSet: () => (this.#failures = Math.min(this.#failures, 1)),
    });
    this.#refusals = new Refusals({
      queue: options.queue,
      clock: options.clock,
      timers: this.#timers,
      logger: options.logger,
      maxBackoffMs: this.#backoff.maxBackoffMs,
      random: () => this.#random(),
      wake: () => this.#pump(),
    });
  }

  async start(): Promise<void> {
    this.#abort = new AbortController();
    this.#running = true;
    this.#stopping = false;
    this.#o.queue.onChange(() => this.#pump());
    this.#o.registration.whenRegistered(this.#abort.signal).then(
      (device) => {
        this.#device = device;
        this.#o.logger.info({ deviceUUID: device.deviceUUID }, 'device registered: uploading queued fixes');
        this.#pump();
      },
      () => undefined, // stopped before registration
    );
  }

  /** Stops sending; in-flight requests get `graceMs` to finish, then are abandoned (they stay queued). */
  async stop(graceMs = 3000): Promise<void> {
    this.#stopping = true;
    this.#resume.stop();
    this.#refusals.stop();
    if (this.#paceTimer) this.#timers.clearTimeout(this.#paceTimer);
    const pending = [...this.#inFlight.values()].map((f) => f.promise);
    if (pending.length > 0) {
      const grace = new AbortController();
      await Promise.race([Promise.allSettled(pending), sleep(graceMs, undefined, { signal: grace.signal }).catch(() => undefined)]);
      grace.abort();
    }
    this.#abort.abort();
    await Promise.allSettled([...this.#inFlight.values()].map((f) => f.promise));
    this.#running = false;
  }

  status(): UploaderStatus {
    const now = this.#o.clock.monotonicMs();
    const backingOff = this.#resume.at > now;
    const lane = (l: Lane) => {
      const s = this.#lanes.stats(l);
      return {
        inFlight: [...this.#inFlight.values()].filter((f) => f.lane === l).length,
        sent: s.sent,
        ...(s.lastFixTime !== undefined ? { lastFixTime: new Date(s.lastFixTime).toISOString() } : {}),
      };
    };
    const waiting = {
      sentAt: [...this.#inFlight.values()].map((f) => f.sentAt),
      resumeAt: this.#resume.at,
      refused: this.#streamsRefused,
      registered: !!this.#device,
      error: this.#lastError?.code,
    };
    const state: UploaderStatus['state'] = !this.#running
      ? 'stopped'
      : !this.#device
        ? 'waiting-registration'
        : backingOff
          ? 'backoff'
          : this.#inFlight.size > 0
            ? 'sending'
            : 'idle';
    return {
      state,
      order: this.#o.upload.order,
      inFlight: this.#inFlight.size,
      live: lane('live'),
      backlog: lane('backlog'),
      drain: this.#drain.status(now, this.#slots(), this.#pacer.paced ? this.#o.upload.backlogMaxRatePerS : undefined),
      deadLettered: this.#refusals.deadLettered,
      held: this.#refusals.held,
      consecutiveFailures: this.#failures,
      ...(backingOff ? { backoffUntil: this.#o.clock.wallMs() + (this.#resume.at - now) } : {}),
      ...(this.#lastSuccessAt !== undefined ? { lastSuccessAt: this.#lastSuccessAt } : {}),
      ...(this.#lastSuccessMono !== undefined ? { lastSuccessAgeMs: now - this.#lastSuccessMono } : {}),
      ...(this.#lastError ? { lastError: { ...this.#lastError, ageMs: now - this.#lastErrorMono } } : {}),
      ...(this.#refusals.fault ? { fault: { ...this.#refusals.fault, forMs: now - this.#refusals.faultSinceMonoMs } } : {}),
      ...(this.#waitingSince !== undefined
        ? { noProgress: { forMs: now - this.#waitingSince, waitingFor: waitingFor(now, waiting) } }
        : {}),
    };
  }

  /**
   * Requests the transport runs at once: upload.concurrency, and over HTTP/1.1 no more than
   * platform.maxConnections (beyond that they would queue in the dispatcher, the live fix behind
   * the backlog's).
   */
  #slots(): number {
    return Math.max(1, Math.min(this.#o.upload.concurrency, this.#o.slots?.() ?? Infinity));
  }

  #pump(): void {
    if (!this.#running || this.#stopping || !this.#device) return;
    const now = this.#o.clock.monotonicMs();
    if (now < this.#resume.at) {
      // A timer may fire a little before the clock agrees; never let the queue stall on that.
      this.#resume.wakeIn(this.#resume.at - now);
      return;
    }
    // While failing, or while the platform refuses streams, probe with one request at a time.
    const probing = this.#failures > 0 || this.#streamsRefused;
    const slots = this.#slots();
    // Refused events are the uploader's, not the lanes', until the rejection rule sends them back.
    const busy = (e: QueueEntry) => this.#inFlight.has(e.seq) || this.#refusals.has(e.seq) || this.#staleIds.has(e.eventId);
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
    const startedAt = this.#o.clock.monotonicMs();
    if (lane === 'backlog') this.#lastBacklogAt = startedAt;
    this.#waitingSince ??= startedAt;
    const promise = this.#send(entry, lane, startedAt, limited).finally(() => {
      this.#inFlight.delete(entry.seq);
      if (this.#staleIds.delete(entry.eventId) && this.#staleIds.size === 0) this.#lanes.startOver();
      this.#pump();
    });
    this.#inFlight.set(entry.seq, { lane, eventId: entry.eventId, promise, startedAt, limited });
  }

  /** Offered again; one sent before a swap is met under its new seq when the lanes start over (by its old one too, it went out twice). */
  #requeue(entry: QueueEntry): void {
    if (this.#staleIds.has(entry.eventId)) this.#lanes.done(entry);
    else this.#lanes.requeue(entry);
  }

  async #send(entry: QueueEntry, lane: Lane, startedAt: number, limited: boolean): Promise<void> {
    const device = this.#o.registration.current() ?? this.#device!;
    const event = toOtmEvent(entry, device, {
      detail: this.#o.upload.eventDetail,
      ...(this.#o.licensePlate !== undefined ? { licensePlate: this.#o.licensePlate } : {}),
    });
    let result: AttemptResult;
    let response: PlatformResponse | undefined;
    let error: PlatformError | undefined;
    // A probe's failure is the outage the backoff paces; the drain's sample is the exchange's own time.
    const probe = this.#failures > 0;
    let sentAt = startedAt;
    try {
      response = await this.#o.requester.send({
        method: 'PUT',
        url: this.#o.eventsUrl,
        json: event,
        headers: EVENT_REQUEST_HEADERS,
        signal: this.#abort.signal,
        // The event carries its own id (the idempotency key): undici may then run it beside others
        // on one HTTP/2 connection instead of holding it until the previous one is answered.
        idempotent: true,
        // A 2xx is delivery whatever its body: an answer past platform.maxResponseBytes
        // is cut off unread, and the event is not sent again for it.
        answerBodyOptional: true,
        onSend: () => {
          sentAt = this.#o.clock.monotonicMs();
          const flight = this.#inFlight.get(entry.seq);
          if (flight) flight.sentAt = sentAt;
        },
      });
      if (response.oversized) this.#oversized.note(response.status, response.oversized);
      if (response.status >= 200 && response.status < 300) result = { kind: 'response', status: response.status };
      else {
        error = errorFromResponse(response, 'event upload', this.#o.clock.wallMs(), 'events');
        result = {
          kind: 'response',
          status: response.status,
          ...(error.retryAfterMs !== undefined ? { retryAfterMs: error.retryAfterMs } : {}),
        };
      }
    } catch (e) {
      error =
        e instanceof PlatformError
          ? e
          : new PlatformError('UPLOAD_FAILED', `event upload: ${(e as Error)?.message ?? String(e)}`, { class: 'internal', cause: e });
      result = {
        kind: 'error',
        errorClass: error.errorClass,
        ...(error.retryAfterMs !== undefined ? { retryAfterMs: error.retryAfterMs } : {}),
        ...(error.code === 'PLATFORM_STREAM_REFUSED' ? { notProcessed: true } : {}),
      };
    }
    if (this.#abort.signal.aborted && !response) {
      this.#requeue(entry); // abandoned at shutdown: still queued, sent after the restart
      return;
    }
    const endedAt = this.#o.clock.monotonicMs();
    // One outage is one congestion event: its probes, and requests sent before its first failure, do
    // not shrink the window again (it fell to its least in seconds, then paced by 63 latencies).
    const congestion = !probe && startedAt >= this.#lastFailureAt;
    this.#drain.observe(result, endedAt - sentAt, limited, endedAt, this.#random(), congestion);
    // Failures of requests started before the last failure belong to the same outage: one step.
    const failures = startedAt >= this.#lastFailureAt ? this.#failures + 1 : Math.max(1, this.#failures);
    const decision = decideUpload(result, failures, this.#backoff, this.#random());
    switch (decision.action) {
      case 'sent':
        this.#waitingSince = endedAt;
        this.#o.queue.delivered(entry);
        this.#lanes.sent(lane, entry);
        if (lane === 'backlog') this.#drain.delivered(endedAt);
        this.#failures = 0;
        this.#streamsRefused = false;
        this.#resume.clockWorks();
        this.#lastSuccessAt = this.#o.clock.wallMs();
        this.#lastSuccessMono = this.#o.clock.monotonicMs();
        this.#refusals.delivered(entry);
        for (const again of this.#refusals.accepted()) this.#lanes.requeue(again);
        return;
      case 'refused':
        this.#waitingSince = endedAt;
        this.#refusedAnswer(entry, response!, error);
        return;
      case 'retry': {
        this.#requeue(entry);
        this.#note(error, decision.errorClass);
        if (decision.errorClass === 'config' && response) this.#refusals.setFault('config', response.status, error);
        if (startedAt >= this.#lastFailureAt && !decision.holdBackoff) this.#failures = failures;
        this.#streamsRefused = decision.holdBackoff === true;
        this.#lastFailureAt = this.#o.clock.monotonicMs();
        this.#resume.holdUntil(this.#lastFailureAt + decision.delayMs, this.#lastFailureAt);
        if (error?.code === 'PLATFORM_TLS_CLOCK') this.#resume.watchClock();
        this.#o.logger.warn(
          { err: error && errorFields(error), delayMs: decision.delayMs, failures: this.#failures, errorClass: decision.errorClass },
          'event upload failed: backing off, the fix stays queued',
        );
        return;
      }
    }
  }

  /** The rejection rule (rejection-rule.ts), the refusal side: set the event aside, count the run. */
  #refusedAnswer(entry: QueueEntry, response: PlatformResponse, error: PlatformError | undefined): void {
    const systemic = this.#refusals.refused(entry, response, error);
    this.#lanes.done(entry);
    if (systemic) {
      this.#note(error, 'config');
      // Probe with one event every half to whole maxBackoffMs (jittered) until the platform accepts one again.
      this.#failures = Math.max(1, this.#failures + 1);
      this.#lastFailureAt = this.#o.clock.monotonicMs();
      // Spread (half to all of it), so a fleet refused alike does not probe in lockstep.
      const waitMs = spreadMs(this.#backoff.maxBackoffMs, this.#random());
      this.#resume.holdUntil(this.#lastFailureAt + waitMs, this.#lastFailureAt);
    } else this.#note(error, 'rejected');
  }

  #random(): number {
    return (this.#o.random ?? Math.random)();
  }

  /** `cls`: the class the decision gave the answer (the status table's), else the error's own. */
  #note(error: PlatformError | undefined, cls?: ErrorClass): void {
    if (!error) return;
    this.#lastError = uploadError(error, cls ?? error.errorClass, this.#o.clock.wallMs());
    this.#lastErrorMono = this.#o.clock.monotonicMs();
  }
}
