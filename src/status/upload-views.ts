import type { AgeBasis, OutboxSummary, UploadSummary } from './snapshot.js';
import type { OutboxCommitState, OutboxStatus } from '../store/outbox/outbox.js';
import type { SystemicFault, UploadError, UploaderStatus } from '../upload/uploader.js';

/** "Now" for the age of the oldest waiting fix, and what it was read from. */
export interface AgeReference {
  ms: number;
  basis: AgeBasis;
}

/**
 * The outbox and uploader as the status snapshot (src/status/snapshot.ts) shows them. The oldest
 * waiting fix's age is taken against `now`: the newest recorded fix stops moving
 * when the vehicle parks or the receiver falls silent, and an age against it froze.
 */
export function outboxSummary(s: OutboxStatus, recorded: number | undefined, now: AgeReference): OutboxSummary {
  const oldest = s.oldestPendingFixTime === undefined ? undefined : Date.parse(s.oldestPendingFixTime);
  return {
    pending: s.pending,
    ...(oldest !== undefined && Number.isFinite(oldest)
      ? { oldestPendingAgeS: Math.max(0, now.ms - oldest) / 1000, oldestPendingAgeBasis: now.basis }
      : {}),
    sentToday: s.sentToday,
    sentTotal: s.sentTotal,
    thinned: s.thinned,
    deadLetters: s.deadLetters,
    eventsRefused: s.eventsRefused,
    ...(s.lastDeadLetter ? { lastDeadLetter: s.lastDeadLetter } : {}),
    ...(recorded !== undefined ? { recorded } : {}),
  };
}

/**
 * `stallAfterS`: no event settled for this long while fixes wait is a stall (twice
 * platform.requestTimeoutMs: one request may take its whole deadline, a working link no more).
 */
export function uploadSummary(u: UploaderStatus, o: OutboxCommitState, stallAfterS = Infinity): UploadSummary {
  const stalled = u.noProgress && u.noProgress.forMs / 1000 >= stallAfterS ? u.noProgress : undefined;
  return {
    ...(stalled ? { stalled: { forS: stalled.forMs / 1000, waitingFor: stalled.waitingFor } } : {}),
    ...(u.lastSuccessAt !== undefined ? { lastSuccessAt: u.lastSuccessAt } : {}),
    ...(u.lastSuccessAgeMs !== undefined ? { lastSuccessAgeS: u.lastSuccessAgeMs / 1000 } : {}),
    ...(u.lastError ? { lastError: uploadError(u.lastError) } : {}),
    ...(u.fault ? { fault: fault(u.fault) } : {}),
    drain: { ...u.drain },
    lanes: {
      state: u.state,
      order: u.order,
      live: u.live,
      backlog: u.backlog,
      inFlight: u.inFlight,
      consecutiveFailures: u.consecutiveFailures,
      held: u.held,
      ...(u.backoffUntil !== undefined ? { backoffUntil: u.backoffUntil } : {}),
      buffered: o.buffered,
      bound: o.bound,
      lowDisk: o.lowDisk,
      ...(o.lastCommitError ? { lastCommitError: o.lastCommitError } : {}),
    },
  };
}

function uploadError(e: UploadError): NonNullable<UploadSummary['lastError']> {
  return {
    code: e.code,
    class: e.class,
    message: e.message,
    at: e.at,
    ...(e.ageMs !== undefined ? { ageS: e.ageMs / 1000 } : {}),
  };
}

function fault(f: SystemicFault): NonNullable<UploadSummary['fault']> {
  const { forMs, ...rest } = f;
  return { ...rest, ...(forMs !== undefined ? { forS: forMs / 1000 } : {}) };
}
