import type { Dispatcher } from 'undici';

/**
 * Sends a request once more when it failed before any answer and its connection failed because
 * of the header indexer (`retry` decides, and re-dispatches when it says yes): the server refused
 * the header block, so it processed nothing of the request, and the origin now runs on nghttp2's
 * own encoding. Every step otherwise goes to the caller's handler unchanged.
 */
export class IndexerFallbackHandler implements Dispatcher.DispatchHandler {
  readonly inner: Dispatcher.DispatchHandler;
  readonly #retry: (error: Error) => boolean;
  #answered = false;
  #retried = false;

  constructor(inner: Dispatcher.DispatchHandler, retry: (error: Error) => boolean) {
    this.inner = inner;
    this.#retry = retry;
  }

  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    this.inner.onRequestStart?.(controller, context);
  }

  onRequestUpgrade(controller: Dispatcher.DispatchController, statusCode: number, headers: never, socket: never): void {
    this.#answered = true;
    this.inner.onRequestUpgrade?.(controller, statusCode, headers, socket);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: never, statusMessage?: string): void {
    this.#answered = true;
    this.inner.onResponseStart?.(controller, statusCode, headers, statusMessage);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.inner.onResponseData?.(controller, chunk);
  }

  onResponseEnd(controller: Dispatcher.DispatchController, trailers: never): void {
    this.inner.onResponseEnd?.(controller, trailers);
  }

  onResponseError(controller: Dispatcher.DispatchController, error: Error): void {
    if (!this.#answered && !this.#retried && this.#retry(error)) {
      this.#retried = true;
      return;
    }
    this.inner.onResponseError?.(controller, error);
  }
}

/** For a failure reported outside undici (the retry could not be dispatched): nothing to abort. */
export const DETACHED_CONTROLLER = {
  abort: () => undefined,
  pause: () => undefined,
  resume: () => undefined,
  aborted: false,
  paused: false,
  reason: null,
} as unknown as Dispatcher.DispatchController;
