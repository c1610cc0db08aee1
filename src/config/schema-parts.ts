import { isDotSegment, URL_PATH_ID_PROBLEM } from './url-path-id.js';
import type { Zod } from './zod.js';

/** Pieces the sections share, built with the schemas (schema.ts). */
export function schemaParts(z: Zod) {
  /** A string that must hold something other than whitespace. */
  const nonEmpty = z.string().trim().min(1, 'must not be empty');
  /** An id the agent puts into a platform URL path: never a dot segment (url-path-id.ts). */
  const urlPathId = nonEmpty.refine((v) => !isDotSegment(v), { message: URL_PATH_ID_PROBLEM });
  return { nonEmpty, urlPathId };
}

export type SchemaParts = ReturnType<typeof schemaParts>;
