import { z } from 'zod';

/** A string that must hold something other than whitespace. */
export const nonEmpty = z.string().trim().min(1, 'must not be empty');

/**
 * An id the agent puts into a platform URL path (`.../external-system/{id}/external-device/{id}`).
 * Percent-encoding leaves `.` and `..` as they are, and URL resolution removes them as dot
 * segments, so such an id would address another resource of the service.
 */
export const urlPathId = nonEmpty.refine((v) => v !== '.' && v !== '..', {
  message: 'must not be "." or "..": the id goes into a platform URL path, where it would name another resource',
});
