import { PlatformError } from '../../errors.js';
import type { PlatformResponse } from '../contracts.js';
import type { PlatformTransport } from './dispatcher.js';
import { errorFromNetwork, platformMessage } from './http-errors.js';
import type { ContactObserver } from './platform-contact.js';
import type { ClockFacts } from '../../system/clock-offset.js';
import { ResponseCollector, type CollectedResponse } from './response-collector.js';
import { urlParts } from './url-parts.js';

export interface HttpRequest {
  method: 'GET' | 'POST' | 'PUT';
  url: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
  /** Safe to repeat (contracts.ts PlatformRequest.idempotent): lets undici multiplex it over HTTP/2. */
  idempotent?: boolean;
  /** For error messages: "token refresh", "device registration". Never a token. */
  what: string;
  /** A 2xx answer carries secrets for the caller (a token pair): not redacted (secret-redactor.ts). */
  secretAnswer?: boolean;
  /** contracts.ts PlatformRequest.answerBodyOptional: a 2xx past maxResponseBytes is still the answer. */
  answerBodyOptional?: boolean;
}

/** Replaces echoed secrets in an answer's text (platform/auth/secret-redactor.ts is the one the agent uses). */
export interface AnswerRedactor {
  redact(text: string): string;
}

export interface PlatformHttpOptions {
  dispatcher: Pick<PlatformTransport, 'dispatch'>;
  /** platform.requestTimeoutMs: total deadline for headers and body together. */
  requestTimeoutMs: number;
  /** platform.maxResponseBytes. */
  maxResponseBytes: number;
  /** Replaces echoed passwords and tokens in every answer's text before anyone reads it. */
  redactor?: AnswerRedactor;
  /** Told of every exchange's outcome: whether the platform answers (platform-contact.ts, status health). */
  contact?: ContactObserver;
  /**
   * The system clock and its offset from GNSS time (the daemon's receiver), read when TLS refuses a
   * certificate by date: the error then says the clock is wrong and by how much.
   */
  clockFacts?: () => ClockFacts;
}

/**
 * One platform HTTP exchange with the hygiene every call needs: a total deadline (undici's body
 * timeout restarts with every chunk, so a slow-drip server could otherwise hold a request for
 * ever), a size cap on the answer, and a 2xx whose body is not JSON (a captive portal, a proxy's
 * HTML page) turned into a transient error instead of a success. Other statuses are returned for
 * the caller to classify (http-errors.ts).
 *
 * Built on undici's `dispatch` with a small handler (response-collector.ts) rather than
 * `request()`: a backlog drain sends thousands of events a second, and the body stream, URL
 * parsing and the two AbortSignals per call that `request()` with `AbortSignal.any` needs were a
 * fifth of the drain's CPU (profiled). The deadline is one plain timer per request.
 */
/** Immediate resends of a refused HTTP/2 stream; past them the caller backs off (without growing it, retry-decision.ts). */
export const REFUSED_STREAM_RETRIES = 3;

export class PlatformHttp {
  readonly #options: PlatformHttpOptions;
  #refusedStreams = 0;

  constructor(options: PlatformHttpOptions) {
    this.#options = options;
  }

  async send(req: HttpRequest): Promise<PlatformResponse> {
    const contact = this.#options.contact;
    let exchanged: CollectedResponse;
    try {
      exchanged = await this.#exchangeRefusedAgain(req);
    } catch (e) {
      // A caller's abort (the agent stopping) says nothing about the platform.
      if (e instanceof PlatformError) contact?.failed(e.message, e.code);
      throw e;
    }
    const { status, headers, text: raw, oversized } = exchanged;
    if (oversized) {
      contact?.answered();
      return { status, headers, body: undefined, text: '', oversized };
    }
    const ok = status >= 200 && status < 300;
    const text = this.#options.redactor && !(ok && req.secretAnswer) ? this.#options.redactor.redact(raw) : raw;
    const contentType = String(headers['content-type'] ?? '');
    let body: unknown;
    try {
      if (text.trim() !== '' && /\bjson\b/i.test(contentType)) {
        try {
          body = JSON.parse(text) as unknown;
        } catch {
          if (ok) throw notJson(req, status, contentType);
        }
      } else if (ok && text.trim() !== '') {
        throw notJson(req, status, contentType);
      }
    } catch (e) {
      contact?.failed((e as Error).message);
      throw e;
    }
    const response = { status, headers, body, text };
    if (contact) {
      // 5xx, 429 and a proxy asking for its own credentials (407): the platform did not take the request.
      if (status >= 500 || status === 429 || status === 407) {
        const said = platformMessage(response, status);
        contact.failed(`${req.what}: HTTP ${status}${said ? ` (${said})` : ''}`, undefined, status);
      } else contact.answered();
    }
    return response;
  }

  /**
   * An HTTP/2 stream the server refused (RST_STREAM REFUSED_STREAM) was not processed (RFC 9113
   * section 8.7), whatever the request: it goes again at once, up to REFUSED_STREAM_RETRIES times,
   * before the caller sees the refusal. Before, each refusal was an upload failure
   * and grew the backoff: 80 s to recover after 120 s of refusals.
   */
  async #exchangeRefusedAgain(req: HttpRequest): Promise<CollectedResponse> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#exchange(req);
      } catch (e) {
        if (!(e instanceof PlatformError) || e.code !== 'PLATFORM_STREAM_REFUSED' || attempt >= REFUSED_STREAM_RETRIES) throw e;
        this.#refusedStreams++;
      }
    }
  }

  /** Refused streams sent again at once since start (tests, figures). */
  get refusedStreamsRetried(): number {
    return this.#refusedStreams;
  }

  /** A GET whose answer only matters by its status (doctor: does the address answer over TLS?). */
  async probe(url: string, what: string): Promise<number> {
    return (await this.#exchange({ method: 'GET', url, what })).status;
  }

  /** The exchange alone: deadline, caller's abort and size cap, no judgement of the answer. */
  async #exchange(req: HttpRequest): Promise<CollectedResponse> {
    const { requestTimeoutMs: timeoutMs, maxResponseBytes } = this.#options;
    const outer = req.signal;
    if (outer?.aborted) throw outer.reason;
    let collector: ResponseCollector | undefined;
    let timedOut = false;
    // Read when the request starts, not when its error is classified: under load that can be after
    // the clock was set, and a certificate refused on the old clock was then blamed on the platform.
    const clockAtStart = this.#options.clockFacts?.() ?? { wallMs: Date.now() };
    const timer = setTimeout(() => {
      timedOut = true;
      collector?.abort(new Error('deadline')); // reported below as PLATFORM_TIMEOUT
    }, timeoutMs);
    try {
      const { origin, path } = urlParts(req.url);
      collector = new ResponseCollector(maxResponseBytes, (status) => tooLarge(req, status, maxResponseBytes), {
        keepOversized2xx: req.answerBodyOptional === true,
      });
      if (outer) watchAbort(outer, collector);
      return await collector.dispatch(this.#options.dispatcher, {
        origin,
        path,
        method: req.method,
        headers: req.headers ? { accept: 'application/json', ...req.headers } : { accept: 'application/json' },
        body: req.body ?? null,
        ...(req.idempotent ? { idempotent: true } : {}),
      });
    } catch (e) {
      if (e instanceof PlatformError && e.code === 'PLATFORM_RESPONSE_TOO_LARGE') throw e;
      if (outer?.aborted && !timedOut) throw outer.reason ?? e;
      throw errorFromNetwork(e, req.what, req.url, timedOut, timeoutMs, clockAtStart);
    } finally {
      clearTimeout(timer);
      if (outer && collector) unwatchAbort(outer, collector);
    }
  }
}

/**
 * One 'abort' listener per caller signal, however many requests share it: the uploader passes the
 * same signal to every in-flight event, and a listener per request would trip Node's
 * MaxListeners warning and cost an EventTarget registration per call.
 */
const watchers = new WeakMap<AbortSignal, Set<ResponseCollector>>();

function watchAbort(signal: AbortSignal, collector: ResponseCollector): void {
  let set = watchers.get(signal);
  if (!set) {
    const created = new Set<ResponseCollector>();
    set = created;
    watchers.set(signal, created);
    signal.addEventListener(
      'abort',
      () => {
        const reason = signal.reason instanceof Error ? signal.reason : new Error('aborted');
        for (const c of created) c.abort(reason);
        created.clear();
      },
      { once: true },
    );
  }
  set.add(collector);
}

function unwatchAbort(signal: AbortSignal, collector: ResponseCollector): void {
  watchers.get(signal)?.delete(collector);
}

function tooLarge(req: HttpRequest, status: number, max: number): PlatformError {
  return new PlatformError('PLATFORM_RESPONSE_TOO_LARGE', `${req.what}: answer larger than ${max} bytes (platform.maxResponseBytes)`, {
    class: 'transient',
    status,
    details: { status, sent: 'yes' },
  });
}

function notJson(req: HttpRequest, status: number, contentType: string): PlatformError {
  // Most often a captive portal or a proxy's error page: the request did not reach the platform.
  return new PlatformError(
    'PLATFORM_NOT_JSON',
    `${req.what}: HTTP ${status} answer is not JSON (content-type "${contentType || 'none'}"); a proxy or captive portal in between?`,
    {
      class: 'transient',
      status,
      details: { status, contentType, sent: 'maybe' },
    },
  );
}
