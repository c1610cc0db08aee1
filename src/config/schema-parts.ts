import { z } from 'zod';

/** A string that must hold something other than whitespace. */
export const nonEmpty = z.string().trim().min(1, 'must not be empty');
