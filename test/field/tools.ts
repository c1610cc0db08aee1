import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** Whether a command is on PATH (the field tests need systemd-analyze, shellcheck, socat). */
export function haveCommand(name: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0;
}

/** Prints the one-line notice for a test that needs a missing tool and returns whether to skip. */
export function skipWithout(tool: string, what: string): boolean {
  const missing = !haveCommand(tool);
  if (missing) process.stderr.write(`skipping ${what}: ${tool} is not installed (.ci/field-deps.sh installs it)\n`);
  return missing;
}

/**
 * The node the unit's ExecStart names must exist for `systemd-analyze verify`: Debian's
 * /usr/bin/node when present (what the repository's unit says), else the node running the tests
 * (what provision.sh would write into the installed unit).
 */
export const UNIT_NODE = existsSync('/usr/bin/node') ? '/usr/bin/node' : process.execPath;

/**
 * `systemd-analyze verify` exits 0 even for unknown keys and bad values; it only says so on
 * stderr. Clean means: exit 0 and nothing printed.
 */
export function verifyUnit(unitFile: string): { status: number | null; output: string } {
  const r = spawnSync('systemd-analyze', ['verify', '--no-pager', unitFile], { encoding: 'utf8' });
  return { status: r.status, output: `${r.stdout}${r.stderr}`.trim() };
}
