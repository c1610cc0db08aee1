import type { OutboxSummary, UploadSummary } from './snapshot.js';
import type { OutboxCommitState, OutboxStatus } from '../store/outbox/outbox.js';
import type { UploaderStatus } from '../upload/uploader.js';

/** The outbox and uploader as the status snapshot (src/status/snapshot.ts) shows them. */
export function outboxSummary(s: OutboxStatus, recorded?: number): OutboxSummary {
  return {
    pending: s.pending,
    ...(s.oldestPendingAgeMs !== undefined ? { oldestPendingAgeS: s.oldestPendingAgeMs / 1000 } : {}),
    sentToday: s.sentToday,
    sentTotal: s.sentTotal,
    thinned: s.thinned,
    deadLetters: s.deadLetters,
    ...(s.lastDeadLetter ? { lastDeadLetter: s.lastDeadLetter } : {}),
    ...(recorded !== undefined ? { recorded } : {}),
  };
}

export function uploadSummary(u: UploaderStatus, o: OutboxCommitState): UploadSummary {
  return {
    ...(u.lastSuccessAt !== undefined ? { lastSuccessAt: u.lastSuccessAt } : {}),
    ...(u.lastError
      ? { lastError: { code: u.lastError.code, class: u.lastError.class, message: u.lastError.message, at: u.lastError.at } }
      : {}),
    ...(u.fault ? { fault: { ...u.fault } } : {}),
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
