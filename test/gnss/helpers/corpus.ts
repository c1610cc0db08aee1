/**
 * Where the shared gpsd corpus lives: the shared test data folder beside the repository root (so a clone
 * at /tmp/ci/main with /tmp/ci/shared beside it works too). Never copied into the project.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const CORPUS_DIR = path.resolve(REPO_ROOT, '../shared/nmea-corpus');
export const HAVE_CORPUS = existsSync(CORPUS_DIR);
if (!HAVE_CORPUS) console.warn(`gnss tests: ${CORPUS_DIR} is absent; corpus tests skipped`);

/** The corpus logs, sorted (`X.log`, each with `X.log.chk`). */
export function corpusLogs(): string[] {
  if (!HAVE_CORPUS) return [];
  return readdirSync(CORPUS_DIR)
    .filter((f) => f.endsWith('.log'))
    .sort();
}

export function corpusPath(name: string): string {
  return path.join(CORPUS_DIR, name);
}
