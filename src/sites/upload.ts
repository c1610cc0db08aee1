import { AgentError, PlatformError } from '../errors.js';
import { systemClock, type Clock } from '../system/clock.js';
import type { AuthorizedRequester, PlatformResponse } from '../platform/contracts.js';
import type { OtmLocation } from './site-types.js';
import { problemsFromBody, type PlatformProblem } from './platform-answer.js';
import { parseRetryAfter } from '../retry/retry-after.js';
import { configHint, statusMeaning } from '../retry/status-table.js';
import { DEFAULT_LOCATION_RETRY, decideRetry, type RetryPolicy } from './retry.js';

/**
 * The location upload client: `PUT {planningUrl}{locationsPath}` with one location per request
 * (docs/platform-contract.md, Sites). The bearer token, and the single
 * refresh-and-retry on 401, belong to the injected AuthorizedRequester (platform contract, Tokens);
 * this client adds the retries for 408/429/5xx and network failures, with backoff. It writes
 * nothing locally, so a failure leaves nothing half-done.
 */

export type LocationUploadOutcome =
  | { kind: 'stored'; status: number; body: unknown; text: string; attempts: number }
  /** The platform refused this location (400 and other 4xx about the request): fix the data. */
  | { kind: 'rejected'; status: number; problems: PlatformProblem[]; attempts: number }
  /** Could not be delivered: transient failures out of attempts, or an auth/configuration problem. */
  | { kind: 'failed'; error: AgentError; attempts: number };

export interface RetryNotice {
  attempt: number;
  maxAttempts: number;
  delayMs: number;
  /** What went wrong, e.g. `HTTP 503` or a network error message. */
  cause: string;
}

export interface LocationUploaderOptions {
  requester: AuthorizedRequester;
  /** `{planningUrl}{locationsPath}`, absolute. */
  url: string;
  retry?: RetryPolicy;
  /** Waits between attempts; rejects when the signal aborts. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
  /** Its wall clock reads an HTTP-date Retry-After without a Date header (default the system's). */
  clock?: Pick<Clock, 'wallMs'>;
  /** Told before each retry, so a person watching knows why it is taking long. */
  onRetry?: (notice: RetryNotice) => void;
}

export class LocationUploader {
  readonly #options: LocationUploaderOptions;

  constructor(options: LocationUploaderOptions) {
    this.#options = options;
  }

  async put(location: OtmLocation, signal?: AbortSignal): Promise<LocationUploadOutcome> {
    const policy = this.#options.retry ?? DEFAULT_LOCATION_RETRY;
    const sleep = this.#options.sleep ?? abortableSleep;
    for (let attempt = 1; ; attempt++) {
      let response: PlatformResponse | undefined;
      let failure: unknown;
      try {
        // A 2xx is stored whatever its answer's size: an oversized one is cut off and the location reported as sent.
        response = await this.#options.requester.send({
          method: 'PUT',
          url: this.#options.url,
          json: location,
          answerBodyOptional: true,
          ...(signal ? { signal } : {}),
        });
      } catch (e) {
        if (signal?.aborted) throw e;
        failure = e;
      }
      // Credentials the token service refused, or a password that cannot be read: a person has to
      // fix the configuration, and waiting out the token backoff inside a command helps nobody.
      if (failure instanceof AgentError && failure.errorClass === 'config') return { kind: 'failed', error: failure, attempts: attempt };
      const facts = response
        ? { status: response.status, attempt, ...retryAfter(response, (this.#options.clock ?? systemClock).wallMs()) }
        : {
            retryable: failure instanceof AgentError ? failure.retryable : true,
            attempt,
            ...(failure instanceof PlatformError && failure.retryAfterMs !== undefined ? { retryAfterMs: failure.retryAfterMs } : {}),
          };
      const decision = decideRetry(facts, policy, this.#options.random);
      if (decision.action === 'done' && response)
        return { kind: 'stored', status: response.status, body: response.body, text: response.text, attempts: attempt };
      if (decision.action === 'retry') {
        this.#options.onRetry?.({
          attempt,
          maxAttempts: policy.maxAttempts,
          delayMs: decision.delayMs,
          cause: response ? `HTTP ${response.status}` : describe(failure),
        });
        await sleep(decision.delayMs, signal);
        continue;
      }
      if (decision.action === 'give-up') {
        const cause = response ? `the platform answered HTTP ${response.status}` : describe(failure);
        const error = new PlatformError(
          'LOCATION_UPLOAD_UNAVAILABLE',
          `location upload failed: ${cause}; ${decision.reason}. Nothing was changed locally; run the command again later`,
          {
            class: 'transient',
            ...(response ? { status: response.status } : {}),
            ...(failure !== undefined ? { cause: failure } : {}),
          },
        );
        return { kind: 'failed', error, attempts: attempt };
      }
      // stop: not worth repeating.
      if (!response)
        return {
          kind: 'failed',
          error:
            failure instanceof AgentError
              ? failure
              : new PlatformError('LOCATION_UPLOAD_FAILED', `location upload failed: ${describe(failure)}`, {
                  class: 'internal',
                  cause: failure,
                }),
          attempts: attempt,
        };
      const classified = classifyRefusal(response, this.#options.url);
      if (classified) return { kind: 'failed', error: classified, attempts: attempt };
      return { kind: 'rejected', status: response.status, problems: problemsFromBody(response.body, response.text), attempts: attempt };
    }
  }
}

/** Answers that are not about this location's content: credentials or configuration (the `locations` column). */
function classifyRefusal(response: PlatformResponse, url: string): PlatformError | undefined {
  const status = response.status;
  const meaning = statusMeaning('locations', status);
  if (meaning === 'auth') {
    return new PlatformError(
      'LOCATION_UPLOAD_UNAUTHORIZED',
      'the platform answered 401 even after the token was refreshed: check that the account may upload locations and that platform.planningUrl belongs to the same environment as platform.authUrl',
      { class: 'auth', retryable: false, status },
    );
  }
  if (status === 403) {
    return new PlatformError(
      'LOCATION_UPLOAD_FORBIDDEN',
      'the platform answered 403: the account is authenticated but not permitted to upload locations; ask the platform contact to grant it',
      { class: 'config', status },
    );
  }
  if (status === 404 || status === 405 || status === 410) {
    return new PlatformError(
      'LOCATION_UPLOAD_NOT_FOUND',
      `the platform answered ${status} for PUT ${url}: check platform.planningUrl and platform.locationsPath (default /otm/api/v5/locations)`,
      { class: 'config', status },
    );
  }
  if (meaning === 'config') {
    return new PlatformError(
      'LOCATION_UPLOAD_MISCONFIGURED',
      `the platform answered ${status} for PUT ${url}: ${configHint('locations', status)}`,
      {
        class: 'config',
        status,
      },
    );
  }
  return undefined;
}

/** retry/retry-after.ts: an HTTP-date is measured against the answer's own Date header when it has one. */
function retryAfter(response: PlatformResponse, nowWallMs: number): { retryAfterMs?: number } {
  const retryAfterMs = parseRetryAfter(response.headers, nowWallMs);
  return retryAfterMs === undefined ? {} : { retryAfterMs };
}

function describe(e: unknown): string {
  if (e instanceof AgentError) return `${e.code}: ${e.message}`;
  if (e instanceof Error) return e.message;
  return String(e);
}

function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
