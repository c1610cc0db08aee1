/**
 * When a refused event is the event's fault, and when the platform refuses everything.
 *
 * A platform or proxy that answers every request the same way (a 400 for every event because the
 * platform now expects another event shape, a 415, ...) must not destroy the backlog one event at
 * a time. So a refusal (`rejected` in the events column of retry/status-table.ts) only moves an
 * event to the dead letters when the refusal is demonstrably about that event:
 *
 * 1. The answer names the event's fault: OTM5 error objects (`[{type, message, field}]`,
 *    docs/platform-contract.md) with at least one `field`. An answer that names nothing (an HTML page, a
 *    bare 413) is not evidence against the event: the event is held (retried after the longest
 *    backoff), never dropped.
 * 2. The platform accepted another event after the refusal: the refusal is judged only when the
 *    next acceptance arrives; until then the event waits, still in the outbox.
 * 3. The refusal is not part of a systemic run: SYSTEMIC_RUN consecutive first refusals with no
 *    acceptance in between mean the platform refuses everything, however well it behaved earlier
 *    (a platform release can change what it accepts). Then every event stays queued, the
 *    uploader probes with one fresh event every half to whole UPLOAD_BACKOFF.maxBackoffMs (jittered), status reports FAILING with the
 *    status and what to check, and the first acceptance ends the run: the events refused during it
 *    are sent again at full speed, not judged.
 *
 * Only first refusals of an event count towards a run: an event sent again after an earlier
 * refusal and refused again is a repeat offender, evidence about itself rather than about the
 * platform, so a few bad events retried together cannot fake a systemic fault and block the queue.
 */

/** Consecutive first refusals, with no acceptance in between, that make a systemic fault. */
export const SYSTEMIC_RUN = 5;

export interface RefusalFacts {
  /** The answer carries OTM5 error objects, at least one with a `field`. */
  namesField: boolean;
  /** The refusal belonged to a run of first refusals that reached SYSTEMIC_RUN. */
  systemic: boolean;
  /** An acceptance of another event arrived after this refusal. */
  acceptedSince: boolean;
}

export type RefusalVerdict =
  /** The event's own fault: move it to the dead letters. */
  | 'dead-letter'
  /** Not shown to be the event's fault: keep it queued, try it again after the longest backoff. */
  | 'hold'
  /** The systemic run is over: send it again now, with everything else. */
  | 'resend'
  /** Nothing decides yet: keep it queued and aside until the next acceptance. */
  | 'wait';

export function judgeRefusal(f: RefusalFacts): RefusalVerdict {
  if (!f.acceptedSince) return 'wait';
  if (f.systemic) return 'resend';
  return f.namesField ? 'dead-letter' : 'hold';
}

/** Whether an answer body names a field of the event (OTM5 error objects). */
export function namesEventField(body: unknown): boolean {
  const items = Array.isArray(body) ? body : body && typeof body === 'object' ? (body as { errors?: unknown }).errors : undefined;
  if (!Array.isArray(items)) return false;
  return items.some(
    (e) =>
      e !== null && typeof e === 'object' && typeof (e as { field?: unknown }).field === 'string' && (e as { field: string }).field !== '',
  );
}
