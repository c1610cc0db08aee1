import type { ConfigIssue } from '../errors.js';

/**
 * A value written as `<...>` is a placeholder left to fill in (`telematics-agent sim` prints a
 * complete configuration with some): named as such, so that `config check` does not accept a
 * directory literally called `<directory ...>` or report a puzzling schema message instead.
 *
 * Only the keys `sim` leaves as placeholders are checked: the GNSS source (gnss.*) and dataDir.
 * Elsewhere `<...>` is an ordinary value (`device.attributes.note: "<none>"`, a driverName
 * "<unknown>") or a secret (a password `<S3cret!pw>`), which must neither be refused nor echoed.
 */
const PLACEHOLDER = /^<[^<>]*>$/;

export function placeholderIssues(value: unknown): ConfigIssue[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
  const config = value as Record<string, unknown>;
  const candidates: [string, unknown][] = [['dataDir', config.dataDir]];
  const gnss = config.gnss;
  if (gnss !== null && typeof gnss === 'object' && !Array.isArray(gnss))
    for (const [k, v] of Object.entries(gnss as Record<string, unknown>)) candidates.push([`gnss.${k}`, v]);
  return candidates
    .filter((c): c is [string, string] => typeof c[1] === 'string' && PLACEHOLDER.test(c[1]))
    .map(([path, v]) => ({ path, message: `still the placeholder "${v}": replace it with a real value` }));
}
