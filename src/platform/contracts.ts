/**
 * The narrow interfaces the platform side offers to the rest of the agent (uploader, location
 * commands, status). Implementations live beside this file; consumers depend on these only.
 */

export interface PlatformResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON body when the response was JSON, otherwise undefined. */
  body: unknown;
  /** Raw body text (bounded by platform.maxResponseBytes). */
  text: string;
  /**
   * Set when a 2xx answer to a request with `answerBodyOptional` was larger than
   * platform.maxResponseBytes: its body was not read past the bound (body undefined, text '').
   */
  oversized?: { limitBytes: number; declaredBytes?: number };
}

export interface PlatformRequest {
  method: 'GET' | 'POST' | 'PUT';
  /** Absolute URL. */
  url: string;
  /** JSON body; sent with Content-Type application/json. */
  json?: unknown;
  /** Extra request headers (e.g. Prefer); authorization and content-type are the requester's. */
  headers?: Readonly<Record<string, string>>;
  signal?: AbortSignal;
  /**
   * Safe to send twice (an event with its own id: the platform keeps one). Over HTTP/2 undici holds
   * every further non-idempotent request of a connection while one runs, so without this the
   * uploader's requests go out one at a time however many it has in flight.
   */
  idempotent?: boolean;
  /**
   * The 2xx status is the whole answer (an event the platform took): a 2xx whose body is larger
   * than platform.maxResponseBytes is then returned with `oversized` and its body unread, instead
   * of failing as PLATFORM_RESPONSE_TOO_LARGE. Non-2xx answers are bounded as ever.
   */
  answerBodyOptional?: boolean;
  /**
   * Called each time the request goes to the transport: once the token is ready, and again for the
   * retry after a 401. The uploader times the exchange from here, not from its wait for a token
   * (a refresh held by the start-up spread is no sign of the platform's queue).
   */
  onSend?: () => void;
}

/**
 * Sends a request with the current bearer token. On a 401 it has the token manager refresh (single
 * flight, also across processes) and retries exactly once. It resolves with every HTTP status
 * (the caller classifies 4xx/5xx) and rejects with a PlatformError (errors.ts) for network errors,
 * deadlines, oversized bodies, a 2xx whose body is not JSON, or when no token can be had.
 */
export interface AuthorizedRequester {
  send(request: PlatformRequest): Promise<PlatformResponse>;
}

/** Who this device is on the platform. */
export interface DeviceIdentity {
  externalSystemId: string;
  externalDeviceId: string;
  /** Where externalDeviceId came from: 'config', 'system-serial', 'cpu-serial', 'machine-id', ... */
  source: string;
}

export interface RegisteredDevice extends DeviceIdentity {
  deviceUUID: string;
}

/** What the uploader needs from registration. */
export interface RegistrationState {
  /** The registered device, or undefined while not (yet) registered. */
  current(): RegisteredDevice | undefined;
  /** Resolves once the device is registered (immediately when it already is). */
  whenRegistered(signal?: AbortSignal): Promise<RegisteredDevice>;
}

/** Token status for status output: never the token itself. */
export interface TokenStatus {
  state: 'none' | 'valid' | 'refreshing' | 'expired' | 'rejected';
  /** Age of the access token in ms (monotonic), when there is one. */
  ageMs?: number;
  /** When the held token is renewed, ms after its receipt (its lifetime less platform.tokenRefreshMarginS). */
  renewAfterMs?: number;
  /**
   * 'ahead': renewed at renewAfterMs; 'next-request': no request used the token lately (a parked
   * vehicle), so the next one renews it, or idleRenewAfterMs does whichever comes first.
   */
  renewal?: 'ahead' | 'next-request';
  /** An idle agent renews its pair this long after receipt even without a request. */
  idleRenewAfterMs?: number;
  /** Credentials rejected: when the next password attempt is allowed (wall ms). */
  retryAt?: number;
  lastError?: { code: string; message: string };
  passwordGrants: number;
  refreshes: number;
}
