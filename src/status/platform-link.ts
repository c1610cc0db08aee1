import type { PlatformContactView } from '../platform/transport/platform-contact.js';
import type { HeaderIndexerOff } from '../platform/transport/wire-counter.js';
import type { PlatformLinkSummary } from './snapshot.js';

export interface ContactSchedule {
  /** A parked vehicle with a fix sends one event at least this often (recording.parkedHeartbeatS, or stoppedHeartbeatS when longer). */
  heartbeatS: number;
  /** The receiver has a fix now, so the heartbeat (or driving) will send events. */
  receiverHasFix: boolean;
  /** The held token is renewed without a request this long after its receipt (TokenStatus.renewAfterMs, idleRenewAfterMs when idle); undefined without a token. */
  tokenRenewAfterMs: number | undefined;
  /** platform.requestTimeoutMs: one slow attempt before the answer. */
  requestTimeoutMs: number;
}

/**
 * A due contact comes a little late: the token manager looks every 60 s whether its token is due,
 * a heartbeat fix waits for the next commit, and the request itself may take its whole deadline.
 */
const SCHEDULE_SLACK_S = 120;

/** The longest a working link stays silent, or undefined when nothing is due at all. */
export function expectedContactIntervalS(s: ContactSchedule): number | undefined {
  const due = [...(s.receiverHasFix ? [s.heartbeatS] : []), ...(s.tokenRenewAfterMs !== undefined ? [s.tokenRenewAfterMs / 1000] : [])];
  if (due.length === 0) return undefined;
  return Math.round(Math.min(...due) + SCHEDULE_SLACK_S + s.requestTimeoutMs / 1000);
}

export function platformLinkSummary(view: PlatformContactView, schedule: ContactSchedule): PlatformLinkSummary {
  const out: PlatformLinkSummary = {};
  if (view.lastAnswerAgeMs !== undefined) out.lastAnswerAgeS = view.lastAnswerAgeMs / 1000;
  if (view.lastAnswerWallMs !== undefined) out.lastAnswerAt = view.lastAnswerWallMs;
  if (view.failing)
    out.failing = {
      message: view.failing.message,
      since: view.failing.sinceWallMs,
      forS: view.failing.forMs / 1000,
      ...(view.failing.code !== undefined ? { code: view.failing.code } : {}),
      ...(view.failing.status !== undefined ? { status: view.failing.status } : {}),
    };
  const expected = expectedContactIntervalS(schedule);
  if (expected !== undefined) out.expectedIntervalS = expected;
  return out;
}

/** A `status` note per platform host the HTTP/2 header indexer was turned off for (its server refused it). */
export function headerIndexerNotes(off: readonly HeaderIndexerOff[]): string[] {
  return off.map((o) => `HTTP/2 header indexer off for ${o.origin} until restart (${o.reason}): the bearer goes with every request`);
}
