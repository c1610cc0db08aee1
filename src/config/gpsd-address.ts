/**
 * Where gpsd listens, from config `gnss.gpsd`: `host:port` (`127.0.0.1:2947`, `[::1]:2947`), a host
 * alone (gpsd's port 2947), or an absolute path to a Unix stream socket that speaks gpsd's client
 * protocol. (Debian's /run/gpsd.sock is gpsd's *control* socket, not a client one.)
 */

export const GPSD_DEFAULT_PORT = 2947;

export type GpsdAddress = { host: string; port: number } | { socketPath: string };

/** The config schema's pattern for `gnss.gpsd`. */
export const GPSD_ADDRESS = /^(\/[A-Za-z0-9._/-]+|\[[0-9A-Fa-f:.]+\](:\d{1,5})?|[A-Za-z0-9.-]+(:\d{1,5})?)$/;

/** Undefined when the text is not an address (the schema has said why by then). */
export function parseGpsdAddress(text: string): GpsdAddress | undefined {
  if (!GPSD_ADDRESS.test(text)) return undefined;
  if (text.startsWith('/')) return { socketPath: text };
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(text) ?? /^([^:]+)(?::(\d+))?$/.exec(text);
  if (!m || m[1] === undefined) return undefined;
  const port = m[2] === undefined ? GPSD_DEFAULT_PORT : Number(m[2]);
  if (!(port >= 1 && port <= 65_535)) return undefined;
  return { host: m[1], port };
}

/** As status shows it: `127.0.0.1:2947`, `[::1]:2947`, or the socket path. */
export function formatGpsdAddress(a: GpsdAddress): string {
  if ('socketPath' in a) return a.socketPath;
  return `${a.host.includes(':') ? `[${a.host}]` : a.host}:${a.port}`;
}
