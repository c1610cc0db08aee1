import type { Config } from '../config/load.js';
import type { ErrorClass, PlatformError } from '../errors.js';
import type { Logger } from '../log.js';
import type { AuthorizedRequester, RegistrationState } from '../platform/contracts.js';
import type { QueueEntry } from './upload-queue.js';
import type { Clock, Timers } from '../system/clock.js';
import type { UploadQueue } from './upload-queue.js';
import type { DrainStatus } from './drain-meter.js';
import type { UploadBackoff } from './retry-decision.js';

/** The uploader's options and the status it reports (uploader.ts). */
export interface UploaderOptions {
  queue: UploadQueue;
  requester: AuthorizedRequester;
  registration: RegistrationState;
  /** `{planningUrl}{eventsPath}`. */
  eventsUrl: string;
  /** device.licensePlate, sent inline with each event. */
  licensePlate?: string;
  upload: Config['upload'];
  /** Retry bounds after 429/5xx/network errors; default UPLOAD_BACKOFF (tests and benches shorten them). */
  backoff?: UploadBackoff;
  clock: Clock;
  /** The backoff and hold waits (default: the system's); tests pass a ManualClock as both. */
  timers?: Timers;
  logger: Logger;
  random?: () => number;
  /**
   * Requests the transport runs at once for the events origin (default unbounded: HTTP/2 streams);
   * the agent answers platform.maxConnections once the origin spoke HTTP/1.1.
   */
  slots?: () => number;
}

export interface UploadError {
  code: string;
  class: ErrorClass;
  message: string;
  status?: number;
  /** Wall ms (display only: the clock may be stepped after it). */
  at: number;
  /** Monotonic ms since, in status() only: the age status shows. */
  ageMs?: number;
}

/** The upload error status shows, from a PlatformError and the class the retry decision gave it. */
export function uploadError(error: PlatformError, cls: ErrorClass, atWallMs: number): UploadError {
  return {
    code: error.code,
    class: cls,
    message: error.message,
    ...(error.status !== undefined ? { status: error.status } : {}),
    at: atWallMs,
  };
}

/**
 * The platform refuses every event the same way: a configuration answer (405 from a
 * wrong eventsPath, 407 from a proxy, ...) or a run of refusals with no acceptance in between.
 */
export interface SystemicFault {
  status?: number;
  code: string;
  /** 'config': a configuration status; 'refuses-everything': a run of refusals (rejection-rule.ts). */
  kind: 'config' | 'refuses-everything';
  message: string;
  /** What to check: platform.eventsPath, the proxy, the event shape. */
  hint: string;
  /** Wall ms of the first answer of the fault. */
  since: number;
  /** Monotonic ms since `since`, in status() only. */
  forMs?: number;
}

export interface UploaderStatus {
  state: 'stopped' | 'waiting-registration' | 'sending' | 'idle' | 'backoff';
  order: Config['upload']['order'];
  inFlight: number;
  live: { inFlight: number; sent: number; lastFixTime?: string };
  backlog: { inFlight: number; sent: number; lastFixTime?: string };
  /** The backlog lane's adaptive drain. */
  drain: DrainStatus;
  deadLettered: number;
  /** Refused events kept queued: waiting for the rejection rule's verdict, or held for the longest backoff. */
  held: number;
  consecutiveFailures: number;
  /** Wall ms the backoff ends, while backing off. */
  backoffUntil?: number;
  /** Wall ms of the last delivery (display only). */
  lastSuccessAt?: number;
  /** Monotonic ms since the last delivery of this run: the age status shows. */
  lastSuccessAgeMs?: number;
  lastError?: UploadError;
  fault?: SystemicFault;
  /**
   * Fixes wait and no event was settled (delivered or refused) for `forMs` on the monotonic clock,
   * and what the upload waits for now (status calls it stalled past twice the request deadline).
   */
  noProgress?: { forMs: number; waitingFor: string };
}

/** A refused event waiting for the rejection rule's verdict (rejection-rule.ts). */
export interface Refusal {
  entry: QueueEntry;
  namesField: boolean;
  status: number;
  reason: string;
  /** The run it belonged to: shared by reference, marked systemic when the run reaches SYSTEMIC_RUN. */
  run: { count: number; systemic: boolean };
}
