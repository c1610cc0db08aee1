/** The uploader's state that says what it waits for while fixes wait and nothing is settled. */
export interface WaitingFacts {
  /** Requests in flight: when each went out (monotonic ms), undefined while it waits for a token. */
  sentAt: (number | undefined)[];
  /** The backoff ends then (monotonic ms). */
  resumeAt: number;
  /** The last attempt's HTTP/2 stream was refused unprocessed. */
  refused: boolean;
  registered: boolean;
  /** The last upload error's code. */
  error: string | undefined;
}

/**
 * What the upload waits for at `now`, in words for status (UploaderStatus.noProgress): a request
 * the platform holds (no free HTTP/2 stream, or no answer), a token, the backoff, the registration.
 */
export function waitingFor(now: number, f: WaitingFacts): string {
  const sent = f.sentAt.filter((t): t is number => t !== undefined);
  if (sent.length > 0) {
    const oldestS = Math.round((now - Math.min(...sent)) / 1000);
    const n = sent.length === 1 ? '1 event request' : `${sent.length} event requests`;
    return `an answer to ${n} sent ${oldestS} s ago (the platform took the connection, not the requests: no free HTTP/2 stream, or no answer)`;
  }
  if (f.sentAt.length > 0) return 'an access token from the token service';
  if (f.resumeAt > now) {
    const cause = f.refused ? 'the platform refused the streams' : (f.error ?? 'a failure');
    return `the retry backoff after ${cause}, next attempt in ${Math.ceil((f.resumeAt - now) / 1000)} s`;
  }
  if (!f.registered) return 'the device registration';
  return "the backlog's turn (drain pace)";
}
