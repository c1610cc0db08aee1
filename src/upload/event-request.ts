import { PlatformError } from '../errors.js';
import type { PlatformResponse, RegisteredDevice } from '../platform/contracts.js';
import { errorFromResponse } from '../platform/transport/http-errors.js';
import { EVENT_REQUEST_HEADERS } from '../platform/otm5/event.js';
import { toOtmEvent } from '../platform/otm5/vehicle-event.js';
import type { OversizedAnswers } from './oversized-answers.js';
import type { AttemptResult } from './retry-decision.js';
import type { QueueEntry } from './upload-queue.js';
import type { UploaderOptions } from './upload-types.js';

/** What one event request came to: the attempt as the retry decision sees it, the answer if any, the error if any. */
export interface EventAttempt {
  result: AttemptResult;
  response: PlatformResponse | undefined;
  error: PlatformError | undefined;
}

/**
 * One `PUT {planningUrl}{eventsPath}` of a queued fix as an OTM5 event (docs/platform-contract.md),
 * through the AuthorizedRequester, and what came back as an AttemptResult (retry-decision.ts).
 * `onSend`: the exchange went out, after any wait for a token.
 */
export async function sendEvent(
  o: Pick<UploaderOptions, 'requester' | 'eventsUrl' | 'upload' | 'licensePlate' | 'clock'>,
  entry: QueueEntry,
  device: RegisteredDevice,
  x: { signal: AbortSignal; oversized: OversizedAnswers; onSend: () => void },
): Promise<EventAttempt> {
  const event = toOtmEvent(entry, device, {
    detail: o.upload.eventDetail,
    ...(o.licensePlate !== undefined ? { licensePlate: o.licensePlate } : {}),
  });
  let result: AttemptResult;
  let response: PlatformResponse | undefined;
  let error: PlatformError | undefined;
  try {
    response = await o.requester.send({
      method: 'PUT',
      url: o.eventsUrl,
      json: event,
      headers: EVENT_REQUEST_HEADERS,
      signal: x.signal,
      // The event carries its own id (the idempotency key): undici may then run it beside others
      // on one HTTP/2 connection instead of holding it until the previous one is answered.
      idempotent: true,
      // A 2xx is delivery whatever its body: an answer past platform.maxResponseBytes
      // is cut off unread, and the event is not sent again for it.
      answerBodyOptional: true,
      onSend: x.onSend,
    });
    if (response.oversized) x.oversized.note(response.status, response.oversized);
    if (response.status >= 200 && response.status < 300) result = { kind: 'response', status: response.status };
    else {
      error = errorFromResponse(response, 'event upload', o.clock.wallMs(), 'events');
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
  return { result, response, error };
}
