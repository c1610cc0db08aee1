import { PlatformError, type ErrorClass, type ErrorCode } from '../../errors.js';
import { CLOCK_AGREES_MS, describeClockOffset, type ClockFacts } from '../../system/clock-offset.js';
import { describeH2Refusal, h2Refusal } from './h2-errors.js';
import type { PlatformResponse } from '../contracts.js';
import { parseRetryAfter } from '../../retry/retry-after.js';
import { statusErrorClass, type Endpoint } from '../../retry/status-table.js';

/**
 * Classification of everything that can go wrong on a platform call into the three answers the
 * agent knows (errors.ts): retry later (transient), refresh the token (auth), fix configuration
 * (config), plus "the platform refused this item" (rejected).
 */

/** Failures before any byte of the request could reach the server: safe to repeat anything. */
const CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** TLS verification failures: a human must fix the CA or the address (platform.caFile). */
const TLS_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** The class of a status from `endpoint`: the table in retry/status-table.ts. */
export function statusClass(status: number, endpoint: Endpoint): ErrorClass {
  return statusErrorClass(endpoint, status);
}

const STATUS_CODES: Record<number, ErrorCode> = {
  400: 'PLATFORM_BAD_REQUEST',
  401: 'PLATFORM_UNAUTHORIZED',
  403: 'PLATFORM_FORBIDDEN',
  404: 'PLATFORM_NOT_FOUND',
  429: 'PLATFORM_RATE_LIMITED',
};

/**
 * The platform's own words from an error body (Spring `message`, OAuth `error_description`,
 * the OTM5 error array), bounded so that a huge HTML page does not flood the log. With the
 * answer's `status`, a text that only repeats it ("503 Service Temporarily Unavailable" after
 * "HTTP 503") loses the number.
 */
export function platformMessage(res: Pick<PlatformResponse, 'body' | 'text'>, status?: number): string {
  const b = res.body;
  let msg: string | undefined;
  if (Array.isArray(b))
    msg = b
      .map((e) =>
        e && typeof e === 'object'
          ? `${String((e as Record<string, unknown>).field ?? '')}: ${String((e as Record<string, unknown>).message ?? '')}`
          : String(e),
      )
      .join('; ');
  else if (b && typeof b === 'object') {
    const o = b as Record<string, unknown>;
    const m = o.error_description ?? o.message ?? o.error ?? o.detail ?? o.title;
    if (typeof m === 'string') msg = m;
  } else if (typeof b === 'string') msg = b;
  if (msg === undefined) msg = /<[a-z!][^>]*>/i.test(res.text) ? htmlText(res.text) : res.text;
  // The text was redacted when it entered (PlatformHttp, secret-redactor.ts); here it becomes one
  // harmless line: no control characters to forge log lines or move a terminal's cursor.
  const line = plainText(msg, 300);
  return status === undefined ? line : line.replace(new RegExp(`^${status}\\b[\\s:-]*`), '');
}

/**
 * The text of an HTML error page, each piece once: a proxy's page says its status in the title
 * and again in the heading ("503 Service Temporarily Unavailable" twice, then "nginx").
 */
function htmlText(html: string): string {
  const pieces = html
    .replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .split(/<[^>]*>/)
    .map((p) => plainText(p, 300))
    .filter((p) => p !== '');
  const seen = new Set<string>();
  return pieces.filter((p) => !seen.has(p.toLowerCase()) && seen.add(p.toLowerCase())).join('; ');
}

/** Control characters (C0, DEL, C1) and bidirectional overrides become spaces, whitespace runs one space, bounded. */
export function plainText(text: string, max: number): string {
  const t = text
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return t.length > max ? `${t.slice(0, max)}...` : t;
}

/** A PlatformError for a non-2xx answer; `what` names the operation ("device registration"). */
export function errorFromResponse(res: PlatformResponse, what: string, nowWallMs: number, endpoint: Endpoint): PlatformError {
  const cls = statusClass(res.status, endpoint);
  const code = STATUS_CODES[res.status] ?? (res.status >= 500 ? 'PLATFORM_UNAVAILABLE' : 'PLATFORM_HTTP_ERROR');
  const said = platformMessage(res, res.status);
  const retryAfterMs = parseRetryAfter(res.headers, nowWallMs);
  return new PlatformError(code, `${what}: HTTP ${res.status}${said ? ` (${said})` : ''}`, {
    class: cls,
    status: res.status,
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    details: { status: res.status, platformMessage: said },
  });
}

function errorCode(e: unknown): string | undefined {
  let cur: unknown = e;
  for (let i = 0; i < 4 && cur && typeof cur === 'object'; i++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR_SOCKET') return code;
    cur = (cur as { cause?: unknown }).cause;
  }
  const top = (e as { code?: unknown } | undefined)?.code;
  return typeof top === 'string' ? top : undefined;
}

/** A network-level failure (no HTTP answer) as a PlatformError. */
export function errorFromNetwork(
  e: unknown,
  what: string,
  url: string,
  timedOut: boolean,
  timeoutMs: number,
  /** The system clock and its offset from GNSS time: a certificate's validity is judged by it. */
  clock: ClockFacts = { wallMs: Date.now() },
): PlatformError {
  const host = safeHost(url);
  if (timedOut) {
    return new PlatformError(
      'PLATFORM_TIMEOUT',
      `${what}: no complete answer from ${host} within ${timeoutMs} ms (platform.requestTimeoutMs)`,
      { class: 'transient', cause: e, details: { host, sent: 'maybe' } },
    );
  }
  const code = errorCode(e);
  if (code === 'CERT_NOT_YET_VALID' || code === 'CERT_HAS_EXPIRED') return certificateTimeError(e, what, host, code, clock);
  if (code !== undefined && TLS_CODES.has(code)) {
    return new PlatformError(
      'PLATFORM_TLS',
      `${what}: TLS verification of ${host} failed (${code}); for a private CA set platform.caFile`,
      { class: 'config', retryable: true, cause: e, details: { host, code, sent: 'no' } },
    );
  }
  const h2 = h2Refusal(e);
  if (h2) {
    return new PlatformError(
      h2.frame === 'GOAWAY' ? 'PLATFORM_GOAWAY' : h2.notProcessed ? 'PLATFORM_STREAM_REFUSED' : 'PLATFORM_STREAM_RESET',
      `${what}: ${host} ${describeH2Refusal(h2)}`,
      { class: 'transient', cause: e, details: { host, frame: h2.frame, h2Code: h2.code, sent: h2.notProcessed ? 'no' : 'maybe' } },
    );
  }
  const before = code !== undefined && CONNECT_CODES.has(code);
  return new PlatformError(
    'PLATFORM_UNREACHABLE',
    `${what}: ${host} ${before ? 'unreachable' : 'connection failed'} (${code ?? (e as Error)?.message ?? 'error'})`,
    {
      class: 'transient',
      cause: e,
      details: { host, code, sent: before ? 'no' : 'maybe' },
    },
  );
}

/**
 * False only when the request certainly never reached the server (connection refused, DNS,
 * connect timeout, TLS): the token manager may then send the same refresh token again.
 */
export function mayHaveReachedServer(e: unknown): boolean {
  if (!(e instanceof PlatformError)) return true;
  if (e.status !== undefined) return true;
  return e.details?.sent !== 'no';
}

function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '(invalid url)';
  }
}

/**
 * A certificate outside its validity by this system's clock (a boot at 1970 was
 * blamed on the CA file, a clock two years ahead on the configuration). With GNSS time known the
 * message says which is wrong: the clock, by how much, or the certificate itself when the clock
 * agrees with GNSS. Transient either way: it clears when the clock is set or the certificate renewed.
 */
function certificateTimeError(e: unknown, what: string, host: string, code: string, clock: ClockFacts): PlatformError {
  const state = code === 'CERT_NOT_YET_VALID' ? 'not yet valid' : 'expired';
  const says = new Date(clock.wallMs).toISOString();
  const off = clock.offsetMs;
  const details = { host, code, systemClock: says, sent: 'no', ...(off !== undefined ? { clockOffsetMs: Math.round(off) } : {}) };
  if (off !== undefined && Math.abs(off) <= CLOCK_AGREES_MS)
    return new PlatformError(
      'PLATFORM_TLS',
      `${what}: the TLS certificate of ${host} is ${state} (${code}) although this system's clock agrees with GNSS time (${says}): the platform's certificate is out of date; tell the platform's operator`,
      { class: 'transient', cause: e, details },
    );
  const blame =
    off === undefined
      ? `(${code}, clock says ${says}): the clock is likely wrong (status compares it with GNSS time once the receiver has a fix)`
      : `(${code}): the system clock is ${describeClockOffset(off)} GNSS time (clock says ${says}, GNSS ${new Date(clock.wallMs - off).toISOString()}), so it is the clock, not the CA or the configuration`;
  return new PlatformError(
    'PLATFORM_TLS_CLOCK',
    `${what}: the TLS certificate of ${host} is ${state} by this system's clock ${blame}; delivery resumes once the clock is set`,
    {
      class: 'transient',
      cause: e,
      details,
    },
  );
}
