import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/tmp.js';

describe('telematics-agent CLI (built)', async () => {
  it('--help lists the commands and exits 0', async () => {
    const r = await runCli(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Usage: telematics-agent/);
    expect(r.stdout).toMatch(/config/);
  });

  it('config check accepts the shipped example', async () => {
    const r = await runCli(['config', 'check', '--config', 'config/example.json']);
    expect(r.code, r.stderr).toBe(0);
    const printed = JSON.parse(r.stdout) as { platform: { authUrl: string } };
    expect(printed.platform.authUrl).toBe('https://auth-service-stg.services.simacan.com/api/v1');
  });

  it('config check masks the password and exits 2 with every problem listed', async () => {
    const dir = tempDir();
    const good = path.join(dir, 'good.json');
    writeFileSync(
      good,
      JSON.stringify({
        platform: { deviceUrl: 'https://d.example.com/api/public/v2/' },
        credentials: { username: 'u', password: 'cli-secret-pw' },
        device: { externalSystemId: 's', carrierCode: 'c' },
        gnss: { path: '/dev/ttyUSB0' },
      }),
    );
    const ok = await runCli(['config', 'check', '--config', good]);
    expect(ok.code).toBe(0);
    expect(ok.stdout + ok.stderr).not.toContain('cli-secret-pw');
    expect(ok.stdout).toContain('[redacted]');

    const bad = path.join(dir, 'bad.json');
    writeFileSync(
      bad,
      JSON.stringify({
        credentials: { username: 'u', passwordFile: path.join(dir, 'pw') },
        device: { carrierCode: 'c' },
        gnss: { path: '/dev/x', baudRat: 9600 },
      }),
    );
    writeFileSync(path.join(dir, 'pw'), 'x');
    chmodSync(path.join(dir, 'pw'), 0o640);
    const r = await runCli(['config', 'check', '--config', bad]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('device.externalSystemId');
    expect(r.stderr).toContain('gnss.baudRat: unknown key (baudRat: did you mean baudRate?)');
    expect(r.stderr).toContain('platform.deviceUrl');
  });

  it('config check uses TELEMATICS_AGENT_CONFIG and explains a missing file', async () => {
    const r = await runCli(['config', 'check'], { env: { TELEMATICS_AGENT_CONFIG: '/nonexistent/config.json' } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('cannot read /nonexistent/config.json: no such file');
  });
});
