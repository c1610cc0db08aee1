import type { Config } from '../config/load.js';
import { PlatformError, type ErrorClass, errorFields } from '../errors.js';
import type { Logger } from '../log.js';
import type { AuthorizedRequester, PlatformResponse, RegisteredDevice, RegistrationState } from '../platform/contracts.js';
import { errorFromResponse } from '../platform/http-errors.js';
import { EVENT_REQUEST_HEADERS, toLocationUpdateEvent } from '../platform/otm-event.js';
import type { OutboxEntry } from '../store/outbox-row.js';
import type { Clock } from '../system/clock.js';
import { decideUpload, type AttemptResult } from './retry-decision.js';
import { UploadLanes, type Lane } from './lanes.js';
import type { UploadQueue } from './upload-queue.js';

export type { UploadQueue } from './upload-queue.js';

export interface UploaderOptions {
  queue: UploadQueue;
  requester: AuthorizedRequester;
  registration: RegistrationState;
  /** `{planningUrl}{eventsPath}`. */
  eventsUrl: string;
  /** device.licensePlate, sent inline with each event. */
  licensePlate?: string;
  upload: Config['upload'];
  clock: Clock;
  logger: Logger;
  random?: () => number;
}

export interface UploadError {
  code: string;
  class: ErrorClass;
  message: string;
  status?: number;
  /** Wall ms. */
  at: number;
}

export interface UploaderStatus {
  state: 'stopped' | 'waiting-registration' | 'sending' | 'idle' | 'backoff';
  order: Config['upload']['order'];
  inFlight: number;
  live: { inFlight: number; sent: number; lastFixTime?: string };
  backlog: { inFlight: number; sent: number; lastFixTime?: string };
  deadLettered: number;
  consecutiveFailures: number;
  /** Wall ms the backoff ends, while backing off. */
  backoffUntil?: number;
  /** Wall ms of the last delivery. */
  lastSuccessAt?: number;
  lastError?: UploadError;
}

/**
 * Delivers queued fixes as OTM5 locationUpdateEvents, one `PUT {planningUrl}{eventsPath}` each
 * (platform-notes.md), through the AuthorizedRequester (bearer, one refresh and retry on 401) and
 * its keep-alive undici dispatcher, at most upload.concurrency at once. The lanes (lanes.ts) pick
 * what goes next; decideUpload (retry-decision.ts) what an answer means. While failing, one request
 * probes at a time after each backoff, so a 5xx storm costs one request per backoff step.
 * Nothing is sent before the device is registered (platform-spec.md 1).
 */
export class Uploader {
  readonly #o: UploaderOptions;
  readonly #lanes: UploadLanes;
  readonly #inFlight = new Map<number, { lane: Lane; promise: Promise<void>; startedAt: number }>();
  #abort = new AbortController();
  #device: RegisteredDevice | undefined;
  #running = false;
  #stopping = false;
  #failures = 0;
  #lastFailureAt = -Infinity;
  #resumeAt = 0;
  #resumeTimer: NodeJS.Timeout | undefined;
  #deadLettered = 0;
  #lastSuccessAt: number | undefined;
  #lastError: UploadError | undefined;

  constructor(options: UploaderOptions) {
    this.#o = options;
    this.#lanes = new UploadLanes(options.queue, options.upload.order);
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
    if (this.#resumeTimer) clearTimeout(this.#resumeTimer);
    const pending = [...this.#inFlight.values()].map((f) => f.promise);
    if (pending.length > 0) {
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, graceMs);
      });
      await Promise.race([Promise.allSettled(pending), grace]);
      clearTimeout(timer);
    }
    this.#abort.abort();
    await Promise.allSettled([...this.#inFlight.values()].map((f) => f.promise));
    this.#running = false;
  }

  status(): UploaderStatus {
    const now = this.#o.clock.monotonicMs();
    const backingOff = this.#resumeAt > now;
    const lane = (l: Lane) => {
      const s = this.#lanes.stats(l);
      return {
        inFlight: [...this.#inFlight.values()].filter((f) => f.lane === l).length,
        sent: s.sent,
        ...(s.lastFixTime !== undefined ? { lastFixTime: new Date(s.lastFixTime).toISOString() } : {}),
      };
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
      deadLettered: this.#deadLettered,
      consecutiveFailures: this.#failures,
      ...(backingOff ? { backoffUntil: this.#o.clock.wallMs() + (this.#resumeAt - now) } : {}),
      ...(this.#lastSuccessAt !== undefined ? { lastSuccessAt: this.#lastSuccessAt } : {}),
      ...(this.#lastError ? { lastError: this.#lastError } : {}),
    };
  }

  #pump(): void {
    if (!this.#running || this.#stopping || !this.#device) return;
    const now = this.#o.clock.monotonicMs();
    if (now < this.#resumeAt) {
      // A timer may fire a little before the clock agrees; never let the queue stall on that.
      this.#scheduleResume(this.#resumeAt - now);
      return;
    }
    // While failing, probe with one request at a time.
    const limit = this.#failures > 0 ? 1 : this.#o.upload.concurrency;
    while (this.#inFlight.size < limit) {
      const next = this.#lanes.next((seq) => this.#inFlight.has(seq));
      if (!next) return;
      this.#dispatch(next.entry, next.lane);
    }
  }

  #dispatch(entry: OutboxEntry, lane: Lane): void {
    const startedAt = this.#o.clock.monotonicMs();
    const promise = this.#send(entry, lane, startedAt).finally(() => {
      this.#inFlight.delete(entry.seq);
      this.#pump();
    });
    this.#inFlight.set(entry.seq, { lane, promise, startedAt });
  }

  async #send(entry: OutboxEntry, lane: Lane, startedAt: number): Promise<void> {
    const device = this.#o.registration.current() ?? this.#device!;
    const event = toLocationUpdateEvent(entry, device, {
      detail: this.#o.upload.eventDetail,
      ...(this.#o.licensePlate !== undefined ? { licensePlate: this.#o.licensePlate } : {}),
    });
    let result: AttemptResult;
    let response: PlatformResponse | undefined;
    let error: PlatformError | undefined;
    try {
      response = await this.#o.requester.send({
        method: 'PUT',
        url: this.#o.eventsUrl,
        json: event,
        headers: EVENT_REQUEST_HEADERS,
        signal: this.#abort.signal,
      });
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
      };
    }
    if (this.#abort.signal.aborted && !response) {
      this.#lanes.requeue(entry); // abandoned at shutdown: still queued, sent after the restart
      return;
    }
    // Failures of requests started before the last failure belong to the same outage: one step.
    const failures = startedAt >= this.#lastFailureAt ? this.#failures + 1 : Math.max(1, this.#failures);
    const decision = decideUpload(result, failures, this.#o.upload, (this.#o.random ?? Math.random)());
    switch (decision.action) {
      case 'sent':
        this.#o.queue.delivered(entry.seq);
        this.#lanes.sent(lane, entry);
        this.#failures = 0;
        this.#lastSuccessAt = this.#o.clock.wallMs();
        return;
      case 'dead-letter':
        this.#o.queue.deadLetter(entry, response?.status, response?.text ?? error?.message ?? 'refused');
        this.#lanes.done(entry);
        this.#deadLettered++;
        this.#note(error);
        this.#o.logger.warn(
          {
            eventId: entry.eventId,
            fixTime: new Date(entry.time).toISOString(),
            status: response?.status,
            platformMessage: error?.details?.platformMessage,
          },
          'platform refused an event for good: moved to the dead letters',
        );
        return;
      case 'retry': {
        this.#lanes.requeue(entry);
        this.#note(error);
        if (startedAt >= this.#lastFailureAt) this.#failures = failures;
        this.#lastFailureAt = this.#o.clock.monotonicMs();
        const until = this.#lastFailureAt + decision.delayMs;
        if (until > this.#resumeAt) {
          this.#resumeAt = until;
          this.#scheduleResume(decision.delayMs);
        }
        this.#o.logger.warn(
          { err: error && errorFields(error), delayMs: decision.delayMs, failures: this.#failures, errorClass: decision.errorClass },
          'event upload failed: backing off, the fix stays queued',
        );
        return;
      }
    }
  }

  #scheduleResume(delayMs: number): void {
    if (this.#resumeTimer) clearTimeout(this.#resumeTimer);
    this.#resumeTimer = setTimeout(
      () => {
        this.#resumeTimer = undefined;
        this.#pump();
      },
      Math.max(1, Math.ceil(delayMs)),
    );
  }

  #note(error: PlatformError | undefined): void {
    if (!error) return;
    this.#lastError = {
      code: error.code,
      class: error.errorClass,
      message: error.message,
      ...(error.status !== undefined ? { status: error.status } : {}),
      at: this.#o.clock.wallMs(),
    };
  }
}
