/**
 * An id the agent puts into a platform URL path (`.../external-system/{id}/external-device/{id}`).
 * Percent-encoding leaves `.` and `..` as they are, and URL resolution removes them as dot
 * segments, so such an id would address another resource of the service. Plain (no zod) so that
 * the CLI's option parsers can use the same check without loading the schema.
 */
export const URL_PATH_ID_PROBLEM = 'must not be "." or "..": the id goes into a platform URL path, where it would name another resource';

export function isDotSegment(v: string): boolean {
  const t = v.trim();
  return t === '.' || t === '..';
}
