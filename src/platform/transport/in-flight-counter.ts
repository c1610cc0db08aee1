import type { Dispatcher } from 'undici';

/**
 * Requests in flight per origin, counted at the dispatcher: from dispatch until the answer ended or
 * failed. The uploader's concurrency only means something if the transport lets that many run at
 * once (over HTTP/2, non-idempotent PUTs went one at a time), and an HTTP/2 connection is
 * idle only when none is in flight (dispatcher.ts closes it after idleTimeoutMs of that).
 */
export class InFlightCounter {
  readonly #byOrigin = new Map<string, number>();
  readonly #peak = new Map<string, number>();
  readonly #onIdle: (origin: string) => void;
  readonly #onBusy: (origin: string) => void;

  constructor(hooks: { onIdle?: (origin: string) => void; onBusy?: (origin: string) => void } = {}) {
    this.#onIdle = hooks.onIdle ?? (() => undefined);
    this.#onBusy = hooks.onBusy ?? (() => undefined);
  }

  /** Requests of `origin` in flight now (all origins when omitted). */
  count(origin?: string): number {
    if (origin !== undefined) return this.#byOrigin.get(origin) ?? 0;
    let n = 0;
    for (const c of this.#byOrigin.values()) n += c;
    return n;
  }

  /** The most requests of `origin` ever in flight at once. */
  peak(origin: string): number {
    return this.#peak.get(origin) ?? 0;
  }

  /** Wraps `handler` so that its request counts from now until it ends, once, whichever way. */
  track(origin: string, handler: Dispatcher.DispatchHandler): Dispatcher.DispatchHandler {
    const n = (this.#byOrigin.get(origin) ?? 0) + 1;
    this.#byOrigin.set(origin, n);
    if (n > this.peak(origin)) this.#peak.set(origin, n);
    if (n === 1) this.#onBusy(origin);
    let ended = false;
    const end = (): void => {
      if (ended) return;
      ended = true;
      const left = (this.#byOrigin.get(origin) ?? 1) - 1;
      this.#byOrigin.set(origin, left);
      if (left === 0) this.#onIdle(origin);
    };
    return new CountedHandler(handler, end);
  }

  /** A dispatch that threw synchronously never reaches the handler: count it as ended. */
  static endNow(handler: Dispatcher.DispatchHandler): void {
    if (handler instanceof CountedHandler) handler.end();
  }
}

/** Delegates every step to the caller's handler (undici's newer handler API) and notes the end. */
class CountedHandler implements Dispatcher.DispatchHandler {
  readonly #inner: Dispatcher.DispatchHandler;
  readonly end: () => void;

  constructor(inner: Dispatcher.DispatchHandler, end: () => void) {
    this.#inner = inner;
    this.end = end;
  }

  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    this.#inner.onRequestStart?.(controller, context);
  }

  onRequestUpgrade(controller: Dispatcher.DispatchController, statusCode: number, headers: never, socket: never): void {
    this.end();
    this.#inner.onRequestUpgrade?.(controller, statusCode, headers, socket);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: never, statusMessage?: string): void {
    this.#inner.onResponseStart?.(controller, statusCode, headers, statusMessage);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#inner.onResponseData?.(controller, chunk);
  }

  onResponseEnd(controller: Dispatcher.DispatchController, trailers: never): void {
    this.end();
    this.#inner.onResponseEnd?.(controller, trailers);
  }

  onResponseError(controller: Dispatcher.DispatchController, error: Error): void {
    this.end();
    this.#inner.onResponseError?.(controller, error);
  }
}
