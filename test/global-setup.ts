import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * CLI tests run the built CLI as a child process, so dist/ must match src/. Build once per run.
 * In CI a failed build fails the run; locally it warns (a colleague's half-edited file should not
 * stop unrelated tests from running).
 */
export default function setup(): void {
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
}
