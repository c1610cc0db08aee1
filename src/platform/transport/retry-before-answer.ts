import type { Dispatcher } from 'undici';

/**
 * Passes every step of a request to the caller's handler, except a failure before any answer that
 * `retry` takes (it re-dispatches the request and says yes): then the caller hears nothing of it.
 * At most one such retry per request. `observe` sees every failure first, answered or not.
 */
export class RetryBeforeAnswerHandler implements Dispatcher.DispatchHandler {
  readonly inner: Dispatcher.DispatchHandler;
  readonly #retry: (error: Error) => boolean;
  readonly #observe: ((error: Error) => void) | undefined;
  #answered = false;
  #retried = false;

  constructor(inner: Dispatcher.DispatchHandler, retry: (error: Error) => boolean, observe?: (error: Error) => void) {
    this.inner = inner;
    this.#retry = retry;
    this.#observe = observe;
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
    this.#observe?.(error);
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
