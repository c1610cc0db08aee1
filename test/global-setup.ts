import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * CLI tests run the built CLI as a child process, so dist/ must match src/. Build once per run.
 * In CI a failed build fails the run; locally it warns (a colleague's half-edited file should not
 * stop unrelated tests from running).
 *
 * Tests clean up after themselves: every temporary file and folder of this run (the tests', the
 * CLI's and the daemons' they start) goes into one folder of its own (TMPDIR, which the test
 * workers and their child processes inherit), and the run fails if anything is left in it.
 * A folder per run rather than a count of /tmp/ta-* keeps other runs on the same machine out of
 * the check.
 */
export default function setup(): () => void {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const r = spawnSync(
    process.execPath,
    [fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url)), '-p', 'tsconfig.json'],
    { cwd: root, encoding: 'utf8' },
  );
  if (r.status !== 0) {
    const msg = `tsc build failed:\n${r.stdout}${r.stderr}`;
    if (process.env.CI) throw new Error(msg);
    process.stderr.write(`warning: ${msg}\n`);
  }
  spawnSync(process.execPath, ['scripts/postbuild.mjs'], { cwd: root });

  const runTmp = mkdtempSync(path.join(os.tmpdir(), 'ta-'));
  process.env.TMPDIR = runTmp;
  return () => {
    const left = readdirSync(runTmp);
    if (left.length > 0) {
      // vitest reports an error thrown here but still exits 0: set the exit code ourselves.
      process.exitCode = 1;
      process.stderr.write(
        `\nFAIL: the tests left ${left.length} temporary file(s) or folder(s) behind in ${runTmp}: ${left.join(', ')}\n` +
          'remove them when the test finishes (tempDir() in test/helpers/tmp.ts does, with onTestFinished)\n',
      );
      return;
    }
    rmdirSync(runTmp);
  };
}
