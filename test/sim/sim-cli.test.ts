import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { request } from 'undici';
import { CLI } from '../helpers/paths.js';
import { spawnCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait.js';

const built = existsSync(CLI);
if (!built) process.stderr.write('skipping `telematics-agent sim` CLI test: run `npm run build` first (dist/ is absent)\n');

describe.skipIf(!built)('telematics-agent sim', () => {
  it('prints the addresses and a config snippet, serves until SIGTERM, then exits 0', async () => {
    const p = spawnCli(['sim', '--port', '0', '--user', 'fleet', '--password', 'pw1', '--json']);
    let out = '';
    let err = '';
    p.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const line = await new Promise<string>((resolve) =>
      p.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) resolve(out.split('\n')[0] ?? '');
      }),
    );
    const info = JSON.parse(line) as {
      authUrl: string;
      deviceUrl: string;
      planningUrl: string;
      adminUrl: string;
      config: { credentials: { username: string } };
    };
    expect(info.authUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1$/);
    expect(info.deviceUrl).toMatch(/\/api\/public\/v2\/$/);
    expect(info.config.credentials.username).toBe('fleet');
    const login = await request(`${info.authUrl}/auth/password`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'username=fleet&password=pw1',
    });
    expect(login.statusCode).toBe(200);
    await login.body.text();
    const stats = (await (await request(`${info.adminUrl}/stats`)).body.json()) as { passwordGrants: number };
    expect(stats.passwordGrants).toBe(1);
    const exit = new Promise<number | null>((resolve) => p.on('close', resolve));
    p.kill('SIGTERM');
    expect(await exit).toBe(0);
    expect(err).toContain('platform simulator stopped');
  });

  it('its banner names where the location updates and where the trips and engine events are', async () => {
    const p = spawnCli(['sim', '--port', '0']);
    const exit = new Promise<number | null>((resolve) => p.on('close', resolve));
    let out = '';
    p.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    await waitFor('the banner', () => out.includes('accounts:'));
    p.kill('SIGTERM');
    expect(await exit).toBe(0);
    const admin = /adminUrl: +(\S+)/.exec(out)?.[1];
    expect(admin, out).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/_sim$/);
    expect(out).toContain(`${admin}/events          the location updates received (?type=all: with the vehicle events)`);
    expect(out).toContain(`${admin}/vehicle-events  the trips and engine events received (start/stopMovingEvent, start/stopEngineEvent)`);
  });
});
