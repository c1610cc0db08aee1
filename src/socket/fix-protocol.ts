import type { Fix } from '../fix/fix.js';

/**
 * The fix subscription on the daemon's local status socket (a Unix stream socket, config
 * `status.socketPath`), used by `location here` while the daemon holds the serial port.
 * Line-delimited JSON, UTF-8, one object per line, `\n`-terminated; unknown keys are ignored by
 * both sides so that either can grow.
 *
 *   client -> daemon   {"subscribe":"fixes"}
 *   daemon -> client   {"subscribed":"fixes"}                    (acknowledgement, at once)
 *   daemon -> client   {"fix":{"time":1763798400000,"mode":3,"lat":52.1,"lon":5.4,...}}
 *                      ... one per epoch the decoder completes, before the quality gate,
 *                      so that the client can say why fixes are unusable; `satellites` omitted.
 *   daemon -> client   {"error":{"code":"...","message":"..."}}  (then the daemon closes)
 *
 * The client ends the subscription by closing the connection. A daemon that does not know the
 * request answers with an error line (or anything but the acknowledgement); the client then
 * reports that this daemon cannot serve fixes, rather than opening the port a second time.
 */

export const SUBSCRIBE_FIXES = { subscribe: 'fixes' } as const;
export const SUBSCRIBED_FIXES = { subscribed: 'fixes' } as const;

/** Longest line either side accepts; a fix without satellites is a few hundred bytes. */
export const MAX_PROTOCOL_LINE = 64 * 1024;

export function encodeLine(message: unknown): string {
  return `${JSON.stringify(message)}\n`;
}

/** The wire form of a fix: everything but the satellite list. */
export function fixMessage(fix: Fix): { fix: Omit<Fix, 'satellites'> } {
  const { satellites: _s, ...rest } = fix;
  return { fix: rest };
}

/** Checks a received `fix` object: the few fields `location here` relies on must be right. */
export function parseFix(value: unknown): Fix | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const f = value as Record<string, unknown>;
  if (typeof f.time !== 'number' || !Number.isFinite(f.time)) return undefined;
  if (f.mode !== 1 && f.mode !== 2 && f.mode !== 3) return undefined;
  for (const k of ['lat', 'lon', 'altMSL', 'speed', 'track', 'hdop', 'pdop', 'vdop', 'satellitesUsed', 'quality']) {
    if (f[k] !== undefined && (typeof f[k] !== 'number' || !Number.isFinite(f[k]))) return undefined;
  }
  if (typeof f.lat === 'number' && Math.abs(f.lat) > 90) return undefined;
  if (typeof f.lon === 'number' && Math.abs(f.lon) > 180) return undefined;
  return f as unknown as Fix;
}
