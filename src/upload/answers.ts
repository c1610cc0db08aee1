import { type PlatformError, errorFields } from '../errors.js';
import type { Logger } from '../log.js';
import type { PlatformResponse } from '../platform/contracts.js';
import { spreadMs } from '../retry/backoff.js';
import type { DrainMeter } from './drain-meter.js';
import type { EventAttempt } from './event-request.js';
import type { InFlightRequests } from './in-flight-requests.js';
import type { Lane, UploadLanes } from './lanes.js';
import type { Refusals } from './refusals.js';
import { decideUpload, type UploadBackoff } from './retry-decision.js';
import type { UploadHealth } from './upload-health.js';
import type { QueueEntry, UploadQueue } from './upload-queue.js';

export interface AnswerHandlerParts {
  queue: Pick<UploadQueue, 'delivered'>;
  logger: Logger;
  lanes: UploadLanes;
  drain: DrainMeter;
  health: UploadHealth;
  refusals: Refusals;
  inFlight: InFlightRequests;
  backoff: UploadBackoff;
  random: () => number;
  /** An event was settled (delivered or refused) at this monotonic ms: the uploader made progress. */
  settled: (atMs: number) => void;
}

/** When and how one request went: `probe`, it was sent while failing; `limited`, it filled the backlog's window. */
export interface AttemptTiming {
  probe: boolean;
  limited: boolean;
  startedAt: number;
  sentAt: number;
  endedAt: number;
}

/**
 * What an event request's answer does (uploader.ts sends, this settles): it is a sample for the
 * drain (drain-meter.ts), decideUpload (retry-decision.ts) says what it means, and the queue, the
 * lanes, the refusals and the backoff (upload-health.ts) are told.
 */
export class AnswerHandler {
  readonly #p: AnswerHandlerParts;

  constructor(parts: AnswerHandlerParts) {
    this.#p = parts;
  }

  take(entry: QueueEntry, lane: Lane, { result, response, error }: EventAttempt, t: AttemptTiming): void {
    const p = this.#p;
    // One outage is one congestion event: its probes, and requests sent before its first failure, do
    // not shrink the window again (it fell to its least in seconds, then paced by 63 latencies).
    const congestion = !t.probe && p.health.startedAfterFailure(t.startedAt);
    p.drain.observe(result, t.endedAt - t.sentAt, t.limited, t.endedAt, p.random(), congestion);
    const failures = p.health.failuresWith(t.startedAt);
    const decision = decideUpload(result, failures, p.backoff, p.random());
    switch (decision.action) {
      case 'sent':
        p.settled(t.endedAt);
        p.queue.delivered(entry);
        p.lanes.sent(lane, entry);
        if (lane === 'backlog') p.drain.delivered(t.endedAt);
        p.health.succeeded();
        p.refusals.delivered(entry);
        for (const again of p.refusals.accepted()) p.lanes.requeue(again);
        return;
      case 'refused':
        p.settled(t.endedAt);
        this.#refused(entry, response!, error);
        return;
      case 'retry': {
        this.requeue(entry);
        p.health.note(error, decision.errorClass);
        if (decision.errorClass === 'config' && response) p.refusals.setFault('config', response.status, error);
        p.health.retrying({
          failures,
          startedAt: t.startedAt,
          delayMs: decision.delayMs,
          holdBackoff: decision.holdBackoff === true,
          clockError: error?.code === 'PLATFORM_TLS_CLOCK',
        });
        p.logger.warn(
          { err: error && errorFields(error), delayMs: decision.delayMs, failures: p.health.failures, errorClass: decision.errorClass },
          'event upload failed: backing off, the fix stays queued',
        );
        return;
      }
    }
  }

  /** Offered again; one sent before a swap is met under its new seq when the lanes start over (by its old one too, it went out twice). */
  requeue(entry: QueueEntry): void {
    if (this.#p.inFlight.isStale(entry.eventId)) this.#p.lanes.done(entry);
    else this.#p.lanes.requeue(entry);
  }

  /** The rejection rule (rejection-rule.ts), the refusal side: set the event aside, count the run. */
  #refused(entry: QueueEntry, response: PlatformResponse, error: PlatformError | undefined): void {
    const p = this.#p;
    const systemic = p.refusals.refused(entry, response, error);
    p.lanes.done(entry);
    if (systemic) {
      p.health.note(error, 'config');
      // Probe with one event every half to whole maxBackoffMs (jittered) until the platform accepts one again.
      // Spread (half to all of it), so a fleet refused alike does not probe in lockstep.
      p.health.refusedAll(spreadMs(p.backoff.maxBackoffMs, p.random()));
    } else p.health.note(error, 'rejected');
  }
}
