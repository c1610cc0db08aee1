import { z } from 'zod';
import { isDotSegment, URL_PATH_ID_PROBLEM } from './url-path-id.js';

/** A string that must hold something other than whitespace. */
export const nonEmpty = z.string().trim().min(1, 'must not be empty');

/** An id the agent puts into a platform URL path: never a dot segment (url-path-id.ts). */
export const urlPathId = nonEmpty.refine((v) => !isDotSegment(v), { message: URL_PATH_ID_PROBLEM });
