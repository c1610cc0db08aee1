import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (tests and CLI child processes resolve everything from here). */
export const REPO_ROOT = path.resolve(fileURLToPath(new URL('../..', import.meta.url)));

/** The shared test data folder beside the repository: present in CI, absent in a user's fresh clone. */
export const SHARED_DIR = path.resolve(REPO_ROOT, '..', 'shared');
export const HAVE_SHARED = existsSync(SHARED_DIR);

/** The built CLI entry point. */
export const CLI = path.join(REPO_ROOT, 'dist', 'cli', 'main.js');

/** Prints the one-line notice for tests that need the shared test data and returns whether to skip. */
export function skipWithoutShared(what: string): boolean {
  if (!HAVE_SHARED) process.stderr.write(`skipping ${what}: ${SHARED_DIR} is absent (CI always has it)\n`);
  return !HAVE_SHARED;
}
