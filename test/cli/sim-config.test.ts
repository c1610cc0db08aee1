import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runCli, spawnCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/tmp.js';
import { waitFor } from '../helpers/wait.js';

/** `sim` prints a configuration that works once filled in; its account and a busy port are explained. */

/** Starts `sim` with `args` and returns its stdout once the configuration block is complete. */
async function startSim(args: string[]): Promise<{ out: () => string }> {
  const p = spawnCli(['sim', '--port', '0', ...args]);
  let out = '';
  let err = '';
  p.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  p.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise((resolve) => p.on('close', resolve));
  onTestFinished(async () => {
    p.kill('SIGTERM');
    await exited;
  });
  await waitFor('the simulator to print its configuration', () => /\n}\n/.test(out) || out.endsWith('}\n'), { detail: () => err });
  return { out: () => out };
}

describe('sim', () => {
  it('prints a complete configuration that config check names until its placeholders are filled, then accepts', async () => {
    const sim = await startSim([]);
    const text = sim.out();
    expect(text).toContain('accounts: agent');
    const config = JSON.parse(text.slice(text.indexOf('{'))) as { gnss: Record<string, string>; dataDir: string };
    const dir = tempDir();
    const file = path.join(dir, 'sim-config.json');
    writeFileSync(file, JSON.stringify(config, null, 2));
    const unfilled = await runCli(['config', 'check', '--config', file]);
    expect(unfilled.code).toBe(2);
    expect(unfilled.stderr).toMatch(/gnss\.replayFile: still the placeholder "<NMEA log/);
    expect(unfilled.stderr).toMatch(/dataDir: still the placeholder "<directory/);

    writeFileSync(file, JSON.stringify({ ...config, gnss: { replayFile: 'drive.nmea' }, dataDir: 'data' }, null, 2));
    const filled = await runCli(['config', 'check', '--config', file]);
    expect(filled.stderr).toContain(`configuration ${file} is valid`);
    expect(filled.code).toBe(0);
    // The password the simulator was started with, and its addresses on loopback.
    const effective = JSON.parse(filled.stdout) as {
      platform: { authUrl: string; startupJitterS: number };
      credentials: { username: string };
    };
    expect(effective.credentials.username).toBe('agent');
    // A single agent: its first token and registration at once, not after up to the fleet's 30 s.
    expect(effective.platform.startupJitterS).toBe(0);
    expect(effective.platform.authUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1$/);
  });

  it('names the default account in --help', async () => {
    const r = await runCli(['sim', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout.replace(/\s+/g, ' ')).toContain('default: one account agent, password agent-password');
  });

  it('a port in use: one line naming it, exit 1', async () => {
    const first = await startSim(['--json']);
    const port = (JSON.parse(first.out().split('\n')[0] ?? '{}') as { port: number }).port;
    const r = await runCli(['sim', '--port', String(port)], { timeoutMs: 20_000 });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `telematics-agent: sim: port ${port} on 127.0.0.1 is in use (another simulator?); pass another --port, or --port 0 for any free one\n`,
    );
  });
});
