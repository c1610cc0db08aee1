import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { freePort } from '../helpers/ports.js';
import { CLI, REPO_ROOT } from '../helpers/paths.js';
import { cliEnv, runCli, spawnCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/tmp.js';
import { waitFor } from '../helpers/wait.js';

/**
 * The README's first screen and its "agent against the simulator" walkthrough are run
 * as written: the simulator on a kept port, the commands of the second block in a shell (with
 * `npx telematics-agent` as the built CLI), then the daemon, until status shows the device
 * registered and a fix delivered.
 */
const README = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');

function section(title: string): string {
  const start = README.indexOf(`\n## ${title}\n`);
  expect(start, title).toBeGreaterThan(0);
  return README.slice(start, README.indexOf('\n## ', start + 1));
}

function shellBlocks(text: string): string[] {
  return [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] as string);
}

describe('README: first screen', () => {
  const first = README.slice(0, README.indexOf('\n## Configuration\n'));

  it('keeps its two commands and names python3, the native compile and npx', () => {
    expect(shellBlocks(section('Fresh machine: two commands'))[0]).toMatch(/^npm install && npm start .*\nnpm test .*\n$/);
    for (const fact of [
      'python3',
      'compiles SQLite from source: about two minutes',
      'npx telematics-agent',
      '--config FILE',
      'TELEMATICS_AGENT_CONFIG',
    ])
      expect(first, fact).toContain(fact);
    // The line npm prints before the compile: scripts of dependencies run in the foreground.
    expect(readFileSync(path.join(REPO_ROOT, '.npmrc'), 'utf8')).toMatch(/^foreground-scripts=true$/m);
  });

  // The first npx in a fresh clone links the checkout into npm's npx cache and would run its
  // build (prepare) there: here scripts are off, since a build rewrites dist/ file by file under
  // the daemons other test files start from it at the same time (seen: a half-written module).
  it("npx telematics-agent runs the checkout's CLI from a folder inside it, offline", { timeout: 240_000 }, () => {
    // npx links the checkout under <cache>/_npx/<hash>: a cache of the test's own, removed with it,
    // so the suite leaves nothing in the user's ~/.npm.
    const cache = tempDir();
    const r = spawnSync('npx', ['--offline', 'telematics-agent', '--version'], {
      cwd: path.join(REPO_ROOT, 'test'),
      encoding: 'utf8',
      env: { ...cliEnv(), npm_config_cache: cache, npm_config_ignore_scripts: 'true' },
    });
    expect(r.status, r.stderr).toBe(0);
    expect(readdirSync(path.join(cache, '_npx')), 'npx linked the checkout in the test cache').toHaveLength(1);
    const version = (JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    expect(r.stdout.trim().split('\n').at(-1)).toBe(version);
  });

  it('the commands it says need no configuration run without one; the others name the default they looked for', async () => {
    const home = tempDir();
    const none = { cwd: home };
    expect((await runCli(['drive', '--out', path.join(home, 'd.nmea'), '--minutes', '1'], none)).code).toBe(0);
    const decode = await runCli(['nmea', 'decode', path.join(home, 'd.nmea')], none);
    expect(decode.code).toBe(0);
    const check = await runCli(['config', 'check'], none);
    expect(check.code).toBe(2);
    expect(check.stderr).toContain('/etc/telematics-agent/config.json');
  });
});

describe('README: what doctor contacts', () => {
  it('names the flag that tests the password, which doctor --help lists', async () => {
    const row = README.split('\n').find((l) => l.startsWith('| `telematics-agent doctor'));
    expect(row).toContain('[--test-password]');
    for (const fact of ['What it contacts', 'only when no token shows the credentials working', 'never refreshes a token'])
      expect(row, fact).toContain(fact);
    const help = await runCli(['doctor', '--help']);
    expect(help.stdout).toContain('--test-password');
  });
});

describe('README: the agent against the simulator', () => {
  it('runs as written: the kept port, the configuration, config check, then the daemon delivers', async () => {
    const text = section('The agent against the simulator');
    const [simBlock, agentBlock] = shellBlocks(text);
    expect(simBlock).toMatch(/^npx telematics-agent sim --port 8080 /);
    const port = await freePort();
    const withPort = (s: string) => s.replaceAll('8080', String(port));

    const work = tempDir();
    const runDir = path.join(work, 'run');
    mkdirSync(runDir);
    const env = { TELEMATICS_AGENT_RUN_DIR: runDir };
    const sim = spawnCli(['sim', '--port', String(port)], { env });
    onTestFinished(() => {
      sim.kill();
    });
    let simOut = '';
    sim.stdout?.on('data', (d: Buffer) => (simOut += d.toString()));
    await waitFor('the simulator to print its configuration', () => /\n}\n/.test(simOut));
    expect(simOut).toContain(`listening on 127.0.0.1:${port}`);

    // The second block up to the daemon, in a shell (standard input not a socket, so bash reads no rc file), with the built CLI for `npx telematics-agent`.
    const lines = withPort(agentBlock ?? '').split('\n');
    const daemonAt = lines.findIndex((l) => /^npx telematics-agent run\b/.test(l));
    expect(daemonAt).toBeGreaterThan(0);
    const script = lines
      .slice(0, daemonAt)
      .join('\n')
      .replaceAll('npx telematics-agent', `node ${JSON.stringify(CLI)}`);
    const sh = spawnSync('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: work,
      encoding: 'utf8',
      env: cliEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    expect(sh.stderr).toBe('');
    expect(sh.status).toBe(0);
    expect(sh.stdout.trim().split('\n').at(-1)).toBe('valid');

    // The README's configuration is the simulator's own, plus what the walkthrough fills in.
    const printed = JSON.parse(simOut.slice(simOut.indexOf('\n{') + 1, simOut.lastIndexOf('}') + 1)) as Record<
      string,
      Record<string, unknown>
    >;
    const written = JSON.parse(readFileSync(path.join(work, 'sim-config.json'), 'utf8')) as Record<string, Record<string, unknown>>;
    expect(written.credentials).toEqual(printed.credentials);
    expect(written.platform).toEqual(printed.platform);
    expect(written.device).toMatchObject(printed.device ?? {});

    const configEnv = { ...env, TELEMATICS_AGENT_CONFIG: path.join(work, 'sim-config.json') };
    const daemon = spawn(process.execPath, [CLI, 'run'], { cwd: work, env: cliEnv(configEnv), stdio: 'ignore' });
    const exited = new Promise((resolve) => daemon.once('exit', resolve));
    onTestFinished(async () => {
      daemon.kill('SIGTERM');
      await exited;
    });
    let last = '';
    await waitFor(
      'status to show the device registered and a fix delivered',
      async () => {
        const r = await runCli(['status', '--json'], { cwd: work, env: configEnv });
        last = r.stdout + r.stderr;
        const s = JSON.parse(r.stdout || '{}') as { registration?: { deviceUUID?: string }; outbox?: { sentTotal?: number } };
        return s.registration?.deviceUUID !== undefined && (s.outbox?.sentTotal ?? 0) > 0;
      },
      { timeoutMs: 45_000, intervalMs: 500, detail: () => last },
    );
    const stats = (await (await fetch(`http://127.0.0.1:${port}/_sim/stats`)).json()) as { requests: { events: number } };
    expect(stats.requests.events).toBeGreaterThan(0);
  }, 90_000);
});
