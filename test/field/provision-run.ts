import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/paths.js';

/** scripts/provision.sh as the provisioning tests run it: under --root DIR, offline, without a terminal. */
export const SCRIPT = path.join(REPO_ROOT, 'scripts', 'provision.sh');
export const PASSWORD = 'pw-Never-Printed-42';
export const DEVICE_URL = 'https://tracking-device-service.example.com/api/public/v2/';

export interface Run {
  status: number | null;
  out: string;
}

export function provision(root: string, args: string[], opts: { input?: string; script?: string } = {}): Run {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    // The run's own temporary folder (global-setup.ts fails the run if the script leaves its staging behind).
    ...(process.env.TMPDIR === undefined ? {} : { TMPDIR: process.env.TMPDIR }),
    LANG: 'C.UTF-8',
    // The dependencies come from the npm cache that `npm ci` of this checkout filled: no network.
    npm_config_offline: 'true',
    npm_config_update_notifier: 'false',
  };
  // setsid: no controlling terminal, so the script can never stop to ask for a password.
  const r = spawnSync(
    'setsid',
    ['--wait', 'bash', opts.script ?? SCRIPT, '--root', root, '--node', process.execPath, '--probe-seconds', '1', ...args],
    {
      encoding: 'utf8',
      env,
      input: opts.input ?? '',
      timeout: 120_000,
    },
  );
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}
