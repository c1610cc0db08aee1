import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';

/** A fresh temporary directory per call, removed after the current test. */
export function tempDir(prefix = 'ta-test-'): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
