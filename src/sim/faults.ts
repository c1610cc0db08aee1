import type { Random } from './random.js';

/** The simulator's routes, as fault and statistics keys. */
export const ROUTES = ['auth.password', 'auth.refresh', 'devices', 'events', 'locations'] as const;
export type RouteName = (typeof ROUTES)[number];

export function isRouteName(v: unknown): v is RouteName {
  return typeof v === 'string' && (ROUTES as readonly string[]).includes(v);
}

/**
 * Faults of one route. Rates are probabilities per request (0..1), drawn from the simulator's
 * seeded random source. Order of application: resetStream, goAway, drop, 500, 503, 429, 401, html, echo, then the
 * request is processed, then dropAnswer closes the connection or latency/drip shape the answer.
 */
export interface FaultSpec {
  /** Answer 500 (the OTM5 API's 500 body is a string). */
  status500Rate?: number;
  /** Answer 503 with an HTML page, as a gateway in front of the service does. */
  status503Rate?: number;
  /** Answer 429 with `Retry-After: retryAfterS`. */
  status429?: { rate: number; retryAfterS: number };
  /** Close the connection without an answer, before the request is processed. */
  dropRate?: number;
  /**
   * Process the request, then close the connection without an answer: the client cannot know that
   * it was acted on (a refresh that rotated the pair, an event that was stored).
   */
  dropAnswerRate?: number;
  /**
   * Answer `status` with an error body that repeats the request: its body and its Authorization
   * header (a verbose proxy or a debugging error page). `format` json (default: an
   * object with OAuth, Spring and OTM5 style fields all quoting the request) or text (text/plain).
   * The request is not processed.
   */
  echo?: { rate: number; status: number; format?: 'json' | 'text' };
  /** Answer 401 although the bearer token is valid (the platform's "expires earlier in rare cases"). Service routes only. */
  unauthorizedRate?: number;
  /** Answer 200 with an HTML page instead of the real answer (a captive portal or proxy); the request is not processed. */
  htmlRate?: number;
  /** Delay the answer by this much, after the request was processed (a timeout then leaves a processed request behind). */
  latencyMs?: number;
  /** Send the answer's body one byte every this many ms (a slow-drip server). */
  dripMs?: number;
  /**
   * Answer this status to every request of the route, as a wrong path (404/405/410), a proxy (407)
   * or a platform that refuses every event shape does; a 400 carries OTM5 error objects naming a
   * field. Applied after the drop and 5xx/429 rates.
   */
  status?: number;
  /**
   * Events route: refuse the first this-many distinct event ids with an OTM5 400 naming a field,
   * and keep refusing exactly those ids (a platform that finds fault with one event) while
   * accepting every other.
   */
  rejectEvents?: number;
  /**
   * Process the request, then answer its 2xx as 200 with the entity padded to `bytes` (a platform
   * that echoes more than anyone asked for, ignoring Prefer: return=minimal).
   */
  oversizedAnswer?: { rate: number; bytes: number };
  /**
   * HTTP/2: reset the request's stream with RST_STREAM of this error code (a name from RFC 9113
   * section 7: REFUSED_STREAM, CANCEL, INTERNAL_ERROR, ...) before it is processed. REFUSED_STREAM
   * is the server's promise that nothing of the request was processed. HTTP/1.1: the connection
   * is dropped instead.
   */
  resetStream?: { rate: number; code: Http2ErrorName };
  /**
   * HTTP/2: GOAWAY with this error code, whose last stream id excludes this request (so it was not
   * processed), then the connection closes. HTTP/1.1: the connection is dropped instead.
   */
  goAway?: { rate: number; code: Http2ErrorName };
  /** Fire at most this many times, then the fault removes itself. */
  limit?: number;
}

/** HTTP/2 error codes by name (RFC 9113 section 7). */
export const HTTP2_ERRORS = {
  NO_ERROR: 0,
  PROTOCOL_ERROR: 1,
  INTERNAL_ERROR: 2,
  FLOW_CONTROL_ERROR: 3,
  SETTINGS_TIMEOUT: 4,
  STREAM_CLOSED: 5,
  FRAME_SIZE_ERROR: 6,
  REFUSED_STREAM: 7,
  CANCEL: 8,
  COMPRESSION_ERROR: 9,
  CONNECT_ERROR: 10,
  ENHANCE_YOUR_CALM: 11,
  INADEQUATE_SECURITY: 12,
  HTTP_1_1_REQUIRED: 13,
} as const;
export type Http2ErrorName = keyof typeof HTTP2_ERRORS;

export type FaultAction =
  | { kind: 'resetStream'; code: number }
  | { kind: 'goAway'; code: number }
  | { kind: 'drop' }
  | { kind: 'status'; status: number; retryAfterS?: number }
  | { kind: 'html' }
  | { kind: 'echo'; status: number; format: 'json' | 'text' }
  | { kind: 'dropAnswer' }
  | { kind: 'pass' };

export interface FaultDecision {
  action: FaultAction;
  latencyMs: number;
  dripMs: number;
  /** oversizedAnswer: pad a 2xx answer to this many bytes. */
  padToBytes?: number;
}

export class Faults {
  readonly #specs = new Map<RouteName, FaultSpec & { fired: number }>();
  readonly #random: Random;
  /** Event ids the `rejectEvents` fault chose. */
  readonly #rejected = new Set<string>();
  /** Faults injected per route, for the statistics. */
  readonly fired: Record<RouteName, number>;

  constructor(random: Random) {
    this.#random = random;
    this.fired = Object.fromEntries(ROUTES.map((r) => [r, 0])) as Record<RouteName, number>;
  }

  /** Sets (replaces) the faults of one route; an empty spec or undefined clears them. */
  set(route: RouteName, spec: FaultSpec | undefined): void {
    if (spec === undefined || Object.keys(spec).length === 0) {
      this.#specs.delete(route);
      return;
    }
    validateSpec(route, spec);
    this.#specs.set(route, { ...spec, fired: 0 });
  }

  clear(): void {
    this.#specs.clear();
    this.#rejected.clear();
  }

  /** The `rejectEvents` fault: whether this event id is one the platform refuses. */
  rejectsEvent(id: string): boolean {
    const spec = this.#specs.get('events');
    if (this.#rejected.has(id)) return spec?.rejectEvents !== undefined;
    if (spec?.rejectEvents === undefined || this.#rejected.size >= spec.rejectEvents) return false;
    this.#rejected.add(id);
    spec.fired += 1;
    this.fired.events += 1;
    return true;
  }

  get(route: RouteName): FaultSpec | undefined {
    const s = this.#specs.get(route);
    if (!s) return undefined;
    const { fired: _fired, ...spec } = s;
    return spec;
  }

  /** Decides what happens to one request of `route`. */
  decide(route: RouteName, isService: boolean): FaultDecision {
    const spec = this.#specs.get(route);
    const none: FaultDecision = { action: { kind: 'pass' }, latencyMs: 0, dripMs: 0 };
    if (!spec) return none;
    const hit = (rate: number | undefined): boolean => rate !== undefined && rate > 0 && this.#random() < rate;
    let action: FaultAction = { kind: 'pass' };
    if (spec.resetStream && hit(spec.resetStream.rate)) action = { kind: 'resetStream', code: HTTP2_ERRORS[spec.resetStream.code] };
    else if (spec.goAway && hit(spec.goAway.rate)) action = { kind: 'goAway', code: HTTP2_ERRORS[spec.goAway.code] };
    else if (hit(spec.dropRate)) action = { kind: 'drop' };
    else if (hit(spec.status500Rate)) action = { kind: 'status', status: 500 };
    else if (hit(spec.status503Rate)) action = { kind: 'status', status: 503 };
    else if (spec.status429 && hit(spec.status429.rate)) action = { kind: 'status', status: 429, retryAfterS: spec.status429.retryAfterS };
    else if (isService && hit(spec.unauthorizedRate)) action = { kind: 'status', status: 401 };
    else if (hit(spec.htmlRate)) action = { kind: 'html' };
    else if (spec.echo && hit(spec.echo.rate)) action = { kind: 'echo', status: spec.echo.status, format: spec.echo.format ?? 'json' };
    else if (hit(spec.dropAnswerRate)) action = { kind: 'dropAnswer' };
    else if (spec.status !== undefined) action = { kind: 'status', status: spec.status };
    const pad = action.kind === 'pass' && spec.oversizedAnswer && hit(spec.oversizedAnswer.rate) ? spec.oversizedAnswer.bytes : undefined;
    const shaped = (spec.latencyMs ?? 0) > 0 || (spec.dripMs ?? 0) > 0 || pad !== undefined;
    if (action.kind !== 'pass' || shaped) {
      spec.fired += 1;
      this.fired[route] += 1;
      if (spec.limit !== undefined && spec.fired >= spec.limit) this.#specs.delete(route);
    }
    return { action, latencyMs: spec.latencyMs ?? 0, dripMs: spec.dripMs ?? 0, ...(pad !== undefined ? { padToBytes: pad } : {}) };
  }
}

function validateSpec(route: RouteName, spec: FaultSpec): void {
  const rates: (keyof FaultSpec)[] = ['status500Rate', 'status503Rate', 'dropRate', 'dropAnswerRate', 'unauthorizedRate', 'htmlRate'];
  for (const k of rates) {
    const v = spec[k];
    if (v !== undefined && (typeof v !== 'number' || v < 0 || v > 1))
      throw new RangeError(`fault ${route}.${k} must be a number from 0 to 1`);
  }
  if (spec.status429 !== undefined) {
    const { rate, retryAfterS } = spec.status429;
    if (typeof rate !== 'number' || rate < 0 || rate > 1)
      throw new RangeError(`fault ${route}.status429.rate must be a number from 0 to 1`);
    if (typeof retryAfterS !== 'number' || retryAfterS < 0)
      throw new RangeError(`fault ${route}.status429.retryAfterS must be a number >= 0`);
  }
  if (spec.echo !== undefined) {
    const { rate, status, format } = spec.echo;
    if (typeof rate !== 'number' || rate < 0 || rate > 1) throw new RangeError(`fault ${route}.echo.rate must be a number from 0 to 1`);
    if (typeof status !== 'number' || !Number.isInteger(status) || status < 200 || status > 599)
      throw new RangeError(`fault ${route}.echo.status must be an HTTP status from 200 to 599`);
    if (format !== undefined && format !== 'json' && format !== 'text')
      throw new RangeError(`fault ${route}.echo.format must be json or text`);
  }
  for (const k of ['resetStream', 'goAway'] as const) {
    const f = spec[k];
    if (f === undefined) continue;
    if (typeof f.rate !== 'number' || f.rate < 0 || f.rate > 1)
      throw new RangeError(`fault ${route}.${k}.rate must be a number from 0 to 1`);
    if (!Object.hasOwn(HTTP2_ERRORS, f.code))
      throw new RangeError(`fault ${route}.${k}.code must be an HTTP/2 error name: ${Object.keys(HTTP2_ERRORS).join(', ')}`);
  }
  if (spec.oversizedAnswer !== undefined) {
    const { rate, bytes } = spec.oversizedAnswer;
    if (typeof rate !== 'number' || rate < 0 || rate > 1)
      throw new RangeError(`fault ${route}.oversizedAnswer.rate must be a number from 0 to 1`);
    if (!Number.isInteger(bytes) || bytes < 0 || bytes > 64 * 1024 * 1024)
      throw new RangeError(`fault ${route}.oversizedAnswer.bytes must be a whole number of bytes up to 64 MiB`);
  }
  if (spec.status !== undefined && (!Number.isInteger(spec.status) || spec.status < 200 || spec.status > 599))
    throw new RangeError(`fault ${route}.status must be an HTTP status from 200 to 599`);
  if (spec.rejectEvents !== undefined && route !== 'events') throw new RangeError(`fault ${route}.rejectEvents applies to events only`);
  for (const k of ['latencyMs', 'dripMs', 'limit', 'rejectEvents'] as const) {
    const v = spec[k];
    if (v !== undefined && (typeof v !== 'number' || v < 0)) throw new RangeError(`fault ${route}.${k} must be a number >= 0`);
  }
}
