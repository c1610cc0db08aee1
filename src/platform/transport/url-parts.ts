/**
 * A platform address split as undici's dispatch and the error messages want it. The agent calls a
 * handful of addresses thousands of times, so each is parsed once; an invalid address throws as
 * `new URL` does.
 */
export interface UrlParts {
  /** `https://host:port` */
  origin: string;
  /** Path and query: `/a/b?c`. */
  path: string;
  /** Path only, for messages and logs (a query might carry something private). */
  pathname: string;
}

const MAX_CACHED = 64;
const cache = new Map<string, UrlParts>();

export function urlParts(url: string): UrlParts {
  let parts = cache.get(url);
  if (!parts) {
    const u = new URL(url);
    parts = { origin: u.origin, path: `${u.pathname}${u.search}`, pathname: u.pathname };
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
    cache.set(url, parts);
  }
  return parts;
}
