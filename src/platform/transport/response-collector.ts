import type { Dispatcher } from 'undici';

/**
 * An undici dispatch handler that collects one small answer in memory (the platform's answers are
 * JSON documents of a few KB), with a size cap, and can be aborted at any point: before undici has
 * started the request, while it waits for headers, or in the middle of the body.
 */
export interface CollectedResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** A 2xx answer past the cap, of a request whose answer body is optional: not read further, text ''. */
  oversized?: OversizedAnswer;
}

export interface OversizedAnswer {
  limitBytes: number;
  /** Content-Length, when the server declared one. */
  declaredBytes?: number;
}

export interface ResponseCollectorOptions {
  /**
   * A 2xx past the cap resolves (status and headers, empty text, `oversized`) instead of failing:
   * for requests whose 2xx status is the whole answer (an event the platform accepted).
   */
  keepOversized2xx?: boolean;
}

export class ResponseCollector implements Dispatcher.DispatchHandler {
  readonly #max: number;
  readonly #tooLarge: (status: number) => Error;
  #controller: Dispatcher.DispatchController | undefined;
  #abortReason: Error | undefined;
  #resolve!: (r: CollectedResponse) => void;
  #reject!: (e: unknown) => void;
  #settled = false;
  #status = 0;
  #headers: Record<string, string | string[] | undefined> = {};
  #chunks: Buffer[] = [];
  #size = 0;

  readonly #keepOversized2xx: boolean;

  constructor(maxBytes: number, tooLarge: (status: number) => Error, options: ResponseCollectorOptions = {}) {
    this.#max = maxBytes;
    this.#tooLarge = tooLarge;
    this.#keepOversized2xx = options.keepOversized2xx === true;
  }

  dispatch(dispatcher: Pick<Dispatcher, 'dispatch'>, options: Dispatcher.DispatchOptions): Promise<CollectedResponse> {
    return new Promise<CollectedResponse>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
      if (this.#abortReason) return this.#fail(this.#abortReason);
      try {
        dispatcher.dispatch(options, this);
      } catch (e) {
        this.#fail(e);
      }
    });
  }

  /** Ends the exchange with `reason` (deadline, caller's abort, cap); the socket is not reused. */
  abort(reason: Error): void {
    if (this.#settled) return;
    this.#abortReason ??= reason;
    this.#controller?.abort(reason);
    this.#fail(reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#abortReason) controller.abort(this.#abortReason);
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    if (statusCode < 200) return; // 1xx informational: the answer is still to come
    this.#status = statusCode;
    this.#headers = headers;
    const declared = Number(headers['content-length']);
    if (Number.isFinite(declared) && declared > this.#max) this.#overCap(declared);
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#settled) return;
    this.#size += chunk.length;
    if (this.#size > this.#max) return this.#overCap(undefined);
    this.#chunks.push(chunk);
  }

  /**
   * Past the cap: nothing more is read either way (the stream is cancelled, or the HTTP/1.1
   * connection closed). A 2xx that is the whole answer is still the answer: an
   * accepted event counted as failed was sent again, downloading its 0.3-1.3 MB answer each time.
   */
  #overCap(declaredBytes: number | undefined): void {
    const status = this.#status;
    if (!this.#keepOversized2xx || status < 200 || status >= 300) return this.abort(this.#tooLarge(status));
    this.#settled = true;
    this.#chunks = [];
    const oversized: OversizedAnswer = { limitBytes: this.#max, ...(declaredBytes !== undefined ? { declaredBytes } : {}) };
    this.#resolve({ status, headers: this.#headers, text: '', oversized });
    const stop = new Error('answer past platform.maxResponseBytes: not read');
    this.#abortReason = stop;
    this.#controller?.abort(stop);
  }

  onResponseEnd(): void {
    if (this.#settled) return;
    this.#settled = true;
    const chunks = this.#chunks;
    const text =
      chunks.length === 0 ? '' : chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, this.#size).toString('utf8');
    this.#chunks = [];
    this.#resolve({ status: this.#status, headers: this.#headers, text });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.#fail(this.#abortReason ?? error);
  }

  #fail(e: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#chunks = [];
    this.#reject(e);
  }
}
