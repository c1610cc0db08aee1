import type { InFlightRequests } from './in-flight-requests.js';
import type { Lane, UploadLanes } from './lanes.js';
import type { DrainStatus } from './drain-meter.js';
import type { Refusals } from './refusals.js';
import type { UploadHealth } from './upload-health.js';
import type { UploaderOptions, UploaderStatus } from './upload-types.js';
import { waitingFor } from './waiting-for.js';

/** The uploader's parts status reads, as they are when it is asked. */
export interface UploaderParts {
  running: boolean;
  registered: boolean;
  order: UploaderOptions['upload']['order'];
  inFlight: InFlightRequests;
  lanes: UploadLanes;
  drain: DrainStatus;
  refusals: Refusals;
  health: UploadHealth;
  /** Since when fixes wait with no event settled (monotonic ms); undefined while nothing waits. */
  waitingSince: number | undefined;
}

/** What status shows of the uploader at `now` (monotonic ms). */
export function uploaderStatus(now: number, p: UploaderParts): UploaderStatus {
  const backingOff = p.health.resumeAt > now;
  const lane = (l: Lane) => {
    const s = p.lanes.stats(l);
    return {
      inFlight: p.inFlight.onLane(l),
      sent: s.sent,
      ...(s.lastFixTime !== undefined ? { lastFixTime: new Date(s.lastFixTime).toISOString() } : {}),
    };
  };
  const waiting = {
    sentAt: p.inFlight.sentAt(),
    resumeAt: p.health.resumeAt,
    refused: p.health.streamsRefused,
    registered: p.registered,
    error: p.health.lastError?.code,
  };
  const state: UploaderStatus['state'] = !p.running
    ? 'stopped'
    : !p.registered
      ? 'waiting-registration'
      : backingOff
        ? 'backoff'
        : p.inFlight.size > 0
          ? 'sending'
          : 'idle';
  return {
    state,
    order: p.order,
    inFlight: p.inFlight.size,
    live: lane('live'),
    backlog: lane('backlog'),
    drain: p.drain,
    deadLettered: p.refusals.deadLettered,
    held: p.refusals.held,
    ...p.health.status(now),
    ...(p.refusals.fault ? { fault: { ...p.refusals.fault, forMs: now - p.refusals.faultSinceMonoMs } } : {}),
    ...(p.waitingSince !== undefined ? { noProgress: { forMs: now - p.waitingSince, waitingFor: waitingFor(now, waiting) } } : {}),
  };
}
