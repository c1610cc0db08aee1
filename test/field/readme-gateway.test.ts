import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/paths.js';

/**
 * The README's gateway walk-through covers what an integrator meets on a
 * Raspberry Pi, and every provision.sh flag it uses is one the script knows (a renamed flag
 * would otherwise leave the README describing a command that fails).
 */
const README = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
const start = README.indexOf('## Gateway: Raspberry Pi OS step by step');
const section = README.slice(start, README.indexOf('\n## ', start + 1));
const help = spawnSync('bash', [path.join(REPO_ROOT, 'scripts/provision.sh'), '--help'], { encoding: 'utf8' });

describe('README: the gateway section', () => {
  it('exists and covers the integrator topics', () => {
    expect(start).toBeGreaterThan(0);
    for (const topic of [
      '/dev/serial/by-id/',
      'enable_uart=1',
      'do_serial_cons 1',
      'ModemManager',
      'ID_MM_DEVICE_IGNORE',
      'Node.js 20 (>= 20.19), 22, 24 or 26',
      'deb.nodesource.com',
      'dpkg -i telematics-agent_',
      'dpkg --print-architecture',
      'better-sqlite3',
      'telematics-agent doctor',
      'telematics-agent status',
      'journalctl -u telematics-agent',
      'usermod -aG telematics-agent',
      '--uninstall',
      '--purge',
      'git pull && npm ci',
    ])
      expect(section, topic).toContain(topic);
  });

  it('uses only flags that provision.sh --help lists', () => {
    expect(help.status).toBe(0);
    const known = new Set(['--help', ...[...help.stdout.matchAll(/(--[a-z][a-z-]+)/g)].map((m) => m[1])]);
    const used = new Set<string>();
    // Continued shell lines joined, then every line (or inline code) that runs the script.
    for (const block of README.replace(/\\\n/g, ' ').matchAll(/provision\.sh[^\n`]*/g))
      for (const flag of block[0].matchAll(/(--[a-z][a-z-]+)/g)) used.add(flag[1] as string);
    expect(used.size).toBeGreaterThan(8);
    for (const flag of used) expect(known, flag).toContain(flag);
  });
});
