import type { Dispatcher } from 'undici';
import { RetryBeforeAnswerHandler } from './retry-before-answer.js';

export { DETACHED_CONTROLLER } from './retry-before-answer.js';

/**
 * Sends a request once more when it failed before any answer and its connection failed because
 * of the header indexer (`retry` decides, and re-dispatches when it says yes): the server refused
 * the header block, so it processed nothing of the request, and the origin now runs on nghttp2's
 * own encoding. Every step otherwise goes to the caller's handler unchanged.
 */
export class IndexerFallbackHandler extends RetryBeforeAnswerHandler {
  constructor(inner: Dispatcher.DispatchHandler, retry: (error: Error) => boolean) {
    super(inner, retry);
  }
}
