import type { Zod } from './zod.js';
import { CONFIG_DEFAULTS } from './defaults.js';

/**
 * The `platform` section of the configuration: where the platform lives and how the agent talks to it.
 * Kept apart from schema.ts, which composes every section, because it is the longest one.
 */

const LOOPBACK_HOSTS = new Set(['localhost', '[::1]', '::1']);

function isLoopbackHost(hostname: string): boolean {
  if (LOOPBACK_HOSTS.has(hostname)) return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

const DEVICE_URL_REQUIRED =
  'the tracking device service has no published address; set it to the base your platform contact gave you (it ends in /api/public/v2/)';

/** The `platform` section, built with the schemas (schema.ts). */
export function platformSchema(z: Zod) {
  /** https:// everywhere; http:// only on loopback, for the platform simulator. */
  const platformUrl = (what: string, required?: string) =>
    z.string(required ? { error: (iss) => (iss.input === undefined ? required : undefined) } : undefined).superRefine((value, ctx) => {
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        ctx.addIssue({ code: 'custom', message: `must be an absolute URL (https://host/...) for ${what}, got "${value}"` });
        return;
      }
      if (url.protocol === 'https:') return;
      if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) return;
      if (url.protocol === 'http:') {
        ctx.addIssue({
          code: 'custom',
          message: `must use https:// (http:// is allowed only for loopback hosts such as 127.0.0.1 or localhost), got "${value}"`,
        });
        return;
      }
      ctx.addIssue({ code: 'custom', message: `must be an https:// URL, got protocol "${url.protocol}"` });
    });

  const pathSuffix = (suffix: string) => (value: string) =>
    new URL(value).pathname.replace(/\/+$/, '/').endsWith(suffix) || new URL(value).pathname.endsWith(suffix.replace(/\/$/, ''));

  /**
   * A key of an earlier version that is now a constant: any number is still accepted, so that the
   * file starts, and config/warnings.ts says at start and in `config check` that it is no longer read.
   */
  const retiredKey = (now: string) => z.number().optional().describe(`No longer read: ${now}. Still accepted, with a warning.`);

  return (
    z
      .strictObject({
        authUrl: platformUrl('the token service')
          .refine((v) => safe(() => pathSuffix('/api/v1')(v)), {
            message: 'must end in /api/v1 (the token service base, e.g. https://auth-service.services.simacan.com/api/v1)',
          })
          .optional()
          .describe('Token service base; ends in /api/v1. Default: the production (or staging) address.'),
        deviceUrl: platformUrl('the tracking device service', `is required: ${DEVICE_URL_REQUIRED}`)
          .refine((v) => safe(() => pathSuffix('/api/public/v2/')(v)), {
            message: 'must end in /api/public/v2/ (the tracking device service base)',
          })
          .describe('Tracking device service base; ends in /api/public/v2/. No published address: required.'),
        planningUrl: platformUrl('the planning host')
          .optional()
          .describe('Planning host for location upload and GPS events. Default: the production (or staging) address.'),
        eventsPath: z
          .string()
          .startsWith('/', 'must start with "/"')
          .default(CONFIG_DEFAULTS.platform.eventsPath)
          .describe('Path of the OTM5 event intake on the planning host.'),
        locationsPath: z
          .string()
          .startsWith('/', 'must start with "/"')
          .default(CONFIG_DEFAULTS.platform.locationsPath)
          .describe('Path of the OTM5 location upload on the planning host.'),
        caFile: z
          .string()
          .min(1)
          .optional()
          .describe('Extra CA certificate (PEM) for private staging setups. TLS verification always stays on.'),
        requestTimeoutMs: z
          .number()
          .int()
          .min(1000)
          .max(300_000)
          .default(CONFIG_DEFAULTS.platform.requestTimeoutMs)
          .describe('Total deadline for one platform request, headers and body together.'),
        maxResponseBytes: z
          .number()
          .int()
          .min(1024)
          .max(64 * 1024 * 1024)
          .default(CONFIG_DEFAULTS.platform.maxResponseBytes)
          .describe(
            'Largest response body read. A larger error or token answer is a failure; an event or location the platform accepted (2xx) with a larger answer is delivered, the rest of the answer not downloaded.',
          ),
        maxConnections: z
          .number()
          .int()
          .min(1)
          .max(64)
          .default(CONFIG_DEFAULTS.platform.maxConnections)
          .describe('Keep-alive connections per platform host when it speaks HTTP/1.1 only (one shared HTTP dispatcher).'),
        http2: z
          .boolean()
          .default(CONFIG_DEFAULTS.platform.http2)
          .describe('Offer HTTP/2 (TLS ALPN): one multiplexed connection per platform host; HTTP/1.1 where the server does not take it.'),
        http2HeaderIndexing: z
          .boolean({ error: 'must be true or false (true: the bearer crosses once per HTTP/2 connection; false: with every request)' })
          .default(CONFIG_DEFAULTS.platform.http2HeaderIndexing)
          .describe(
            "HTTP/2: index the bearer in HPACK, so that it crosses once per connection instead of with every request (Node's HTTP/2 never indexes authorization; 891 instead of 1,947 B per event on a warm connection, bench:wire). Assumes the connection carries only the agent's own requests to one platform host and a server whose HPACK decoder follows RFC 7541. A host that refuses the re-encoded headers is retried once with the HTTP library's own encoding and stays on it until restart: one warning in the log, a note in status. false: the bearer goes with every request.",
          ),
        idleTimeoutS: z
          .number()
          .int()
          .min(1)
          .max(3600)
          .optional()
          .describe(
            'Close a platform connection after this long with no request in flight. Default: recording.maxIntervalS + 15, so that the connection lasts between events while driving; a shorter HTTP/1.1 Keep-Alive hint of the server wins.',
          ),
        pingIntervalS: retiredKey('the agent sends no HTTP/2 PING (PING_INTERVAL_S)'),
        tokenRefreshMarginS: z
          .number()
          .int()
          .min(1)
          .max(1800)
          .optional()
          .describe(
            'No longer read: the refresh margin is a constant (TOKEN_REFRESH_MARGIN_S, 120 s, at most a tenth of the lifetime). Still accepted, with a warning.',
          ),
        passwordRetryMinS: retiredKey(
          'rejected credentials are tried again after 2 min doubling to an hour (PASSWORD_RETRY_MIN_S / MAX_S)',
        ),
        passwordRetryMaxS: retiredKey(
          'rejected credentials are tried again after 2 min doubling to an hour (PASSWORD_RETRY_MIN_S / MAX_S)',
        ),
        tokenServiceRetryMinS: retiredKey(
          'a failing token service is asked again after 2 s doubling to 5 min (TOKEN_SERVICE_RETRY_MIN_S / MAX_S)',
        ),
        tokenServiceRetryMaxS: retiredKey(
          'a failing token service is asked again after 2 s doubling to 5 min (TOKEN_SERVICE_RETRY_MIN_S / MAX_S)',
        ),
        registrationRetryMinS: retiredKey(
          'a registration failing transiently is tried again after 5 s doubling to 10 min (REGISTRATION_RETRY_MIN_S / MAX_S)',
        ),
        registrationRetryMaxS: retiredKey(
          'a registration failing transiently is tried again after 5 s doubling to 10 min (REGISTRATION_RETRY_MIN_S / MAX_S)',
        ),
        startupJitterS: z
          .number()
          .min(0)
          .max(3600)
          .default(CONFIG_DEFAULTS.platform.startupJitterS)
          .describe(
            'A fleet powered on together: the first token request (password grant, or refresh of a token that ran out while off) and the first device upsert after start wait a random 0 .. this many seconds. An agent with a valid stored token and registration contacts nobody at start and waits for nothing. Set by how many vehicles start together: 30 s measured with 1,000 (bench:fleet), 0 for one gateway.',
          ),
        registrationConfigRetryS: z
          .number()
          .int()
          .min(60)
          .max(86_400)
          .optional()
          .describe(
            'No longer read: a refused registration waits half to all of an hour (REGISTRATION_CONFIG_RETRY_S). Still accepted, with a warning.',
          ),
      })
      // An absent section is parsed as {}, so that the missing deviceUrl is reported under its own key.
      .prefault({} as { deviceUrl: string })
  );
}

function safe(f: () => boolean): boolean {
  try {
    return f();
  } catch {
    return true; // the URL refinement above already reports an unparsable URL
  }
}
