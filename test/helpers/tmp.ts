import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { onTestFinished } from 'vitest';

/**
 * The prefix of every temporary folder the tests make. test/global-setup.ts points TMPDIR at one
 * folder per run and fails the run if anything is left in it.
 */
export const TEMP_PREFIX = 'ta-';

/**
 * A fresh temporary directory, removed when the current test finishes. Call it inside a test (or
 * a beforeEach); vitest never runs an `afterEach` registered while a test runs, so this uses
 * `onTestFinished`.
 */
export function tempDir(prefix = 'ta-test-'): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
