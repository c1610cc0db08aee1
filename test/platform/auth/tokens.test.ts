import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bootClockFrom } from '../../../src/system/boot-clock.js';
import { PlatformError } from '../../../src/errors.js';
import { REPO_ROOT } from '../../helpers/paths.js';
import { startPlatform, type Platform } from '../fixture.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { silentLogger } from '../../../src/log.js';
import { StartSpread } from '../../../src/platform/device/start-spread.js';

/**
 * The token scenarios (docs/decisions/token-handling.md) against the simulator on loopback and a real SQLite file. Time
 * moves by ManualClock.advance (shared by the simulator's token lifetimes and the agent's boot
 * clock); each scenario asserts the exact number of password grants and refreshes the platform saw.
 */

const MIN = 60_000;
const HOUR = 60 * MIN;

async function get(client: ReturnType<Platform['agent']>['client'], p: Platform): Promise<number> {
  return (await client.send({ method: 'GET', url: p.urls.deviceUrl })).status;
}

describe('token lifecycle (platform-spec.md sections 3 and 5)', () => {
  it('normal hour-long run: one password grant, one refresh shortly before expires_in', async () => {
    const p = await startPlatform({ accessTtlS: 3600 });
    const { client, tokens } = p.agent();
    for (let t = 0; t <= 60; t++) {
      expect(await get(client, p)).toBe(200);
      p.clock.advance(MIN);
    }
    expect(p.sim.stats).toMatchObject({ passwordGrants: 1, refreshes: 1, refreshReuses: 0, unauthorized: 0 });
    expect(tokens.tokenStatus()).toMatchObject({ state: 'valid', passwordGrants: 1, refreshes: 1 });
  });

  it('early access expiry: the 401 triggers one refresh and one retry, no password grant', async () => {
    const p = await startPlatform({ accessTtlS: 3600 });
    const { client } = p.agent();
    expect(await get(client, p)).toBe(200);
    p.clock.advance(10 * MIN);
    p.sim.expireAccessTokens(); // "or earlier in rare cases" (platform contract, Tokens)
    expect(await get(client, p)).toBe(200);
    expect(p.sim.stats).toMatchObject({ passwordGrants: 1, refreshes: 1, unauthorized: 1, refreshReuses: 0 });
    expect(p.sim.stats.requests.devices).toBe(3);
  });

  it('early expiry by the simulator over many tokens never needs the password again', async () => {
    const p = await startPlatform({ accessTtlS: 600, earlyExpiryFraction: 0.5, seed: 7 });
    const { client } = p.agent();
    for (let i = 0; i < 60; i++) {
      expect(await get(client, p)).toBe(200);
      p.clock.advance(MIN);
    }
    const s = p.sim.stats;
    expect(s.passwordGrants).toBe(1);
    expect(s.earlyExpiries).toBeGreaterThan(0);
    expect(s.refreshReuses).toBe(0);
    // Each 401 cost at most one refresh (never a password grant).
    expect(s.unauthorized).toBeLessThanOrEqual(s.refreshes);
  });

  it('refresh-token expiry: one password grant, then refreshes again', async () => {
    const p = await startPlatform({ accessTtlS: 3600 });
    const { client } = p.agent();
    expect(await get(client, p)).toBe(200);
    p.sim.expireRefreshTokens();
    p.clock.advance(HOUR);
    expect(await get(client, p)).toBe(200); // refresh -> 401 -> password grant
    expect(p.sim.stats).toMatchObject({ passwordGrants: 2, refreshes: 0, refreshExpired: 1 });
    p.clock.advance(HOUR);
    expect(await get(client, p)).toBe(200);
    expect(p.sim.stats).toMatchObject({ passwordGrants: 2, refreshes: 1, refreshReuses: 0 });
  });

  it('wrong password: backs off for minutes growing to an hour, reports "rejected", never loops', async () => {
    const p = await startPlatform();
    const log = captureLogger();
    const { client, tokens } = p.agent({ password: 'Wrong-Passw0rd-xyz', logger: log.logger });
    const first = await client.send({ method: 'GET', url: p.urls.deviceUrl }).catch((e: unknown) => e);
    expect(first).toBeInstanceOf(PlatformError);
    expect(first).toMatchObject({ code: 'CREDENTIALS_REJECTED', errorClass: 'config' });
    const firstDelay = (first as PlatformError).retryAfterMs ?? 0;
    expect(firstDelay).toBeGreaterThanOrEqual(30_000);
    for (let i = 0; i < 20; i++)
      await expect(client.send({ method: 'GET', url: p.urls.deviceUrl })).rejects.toMatchObject({ code: 'CREDENTIALS_REJECTED' });
    expect(p.sim.stats.passwordRejected).toBe(1);
    const status = tokens.tokenStatus();
    expect(status.state).toBe('rejected');
    expect(status.retryAt).toBe(p.clock.wallMs() + firstDelay);
    const delays = [firstDelay];
    for (let i = 0; i < 8; i++) {
      p.clock.advance(delays[delays.length - 1] ?? 0);
      const e = (await client.send({ method: 'GET', url: p.urls.deviceUrl }).catch((x: unknown) => x)) as PlatformError;
      delays.push(e.retryAfterMs ?? 0);
    }
    expect(p.sim.stats.passwordRejected).toBe(9);
    expect(delays[1]).toBeGreaterThan(delays[0] ?? 0);
    expect(Math.max(...delays)).toBeLessThanOrEqual(HOUR);
    expect(delays[delays.length - 1]).toBeGreaterThanOrEqual(HOUR / 2);
    // A human fixes the password on the platform side: the next allowed attempt succeeds.
    p.sim.setUser({ username: 'agent', password: 'Wrong-Passw0rd-xyz' });
    p.clock.advance(delays[delays.length - 1] ?? 0);
    expect(await get(client, p)).toBe(200);
    expect(tokens.tokenStatus().state).toBe('valid');
    expect(log.text()).not.toContain('Wrong-Passw0rd-xyz');
    expect(log.text()).toContain('credentials rejected');
  });

  it('5xx on the token service: transient error with a backoff, no password grant instead of the refresh', async () => {
    const p = await startPlatform({ accessTtlS: 3600 });
    const { client, tokens } = p.agent();
    expect(await get(client, p)).toBe(200);
    p.clock.advance(HOUR);
    p.sim.faults.set('auth.refresh', { status500Rate: 1, limit: 2 });
    const e1 = (await client.send({ method: 'GET', url: p.urls.deviceUrl }).catch((x: unknown) => x)) as PlatformError;
    expect(e1).toMatchObject({ errorClass: 'transient', status: 500 });
    expect(e1.retryAfterMs).toBeGreaterThan(0);
    // Within the backoff the token service hears nothing.
    await expect(client.send({ method: 'GET', url: p.urls.deviceUrl })).rejects.toMatchObject({ errorClass: 'transient' });
    expect(p.sim.stats.requests['auth.refresh']).toBe(1);
    p.clock.advance(e1.retryAfterMs ?? 0);
    const e2 = (await client.send({ method: 'GET', url: p.urls.deviceUrl }).catch((x: unknown) => x)) as PlatformError;
    expect(e2.retryAfterMs).toBeGreaterThan(e1.retryAfterMs ?? 0);
    p.clock.advance(e2.retryAfterMs ?? 0);
    expect(await get(client, p)).toBe(200);
    expect(p.sim.stats).toMatchObject({ passwordGrants: 1, refreshes: 1, refreshReuses: 0 });
    expect(p.sim.stats.requests['auth.refresh']).toBe(3);
    expect(tokens.tokenStatus().lastError).toBeUndefined();
  });

  it('an HTML 503 from a gateway in front of the password grant is transient, then works', async () => {
    const p = await startPlatform();
    const { client } = p.agent();
    p.sim.faults.set('auth.password', { status503Rate: 1, limit: 1 });
    const e = (await client.send({ method: 'GET', url: p.urls.deviceUrl }).catch((x: unknown) => x)) as PlatformError;
    expect(e).toMatchObject({ errorClass: 'transient', status: 503 });
    p.clock.advance(e.retryAfterMs ?? 0);
    expect(await get(client, p)).toBe(200);
    expect(p.sim.stats).toMatchObject({ passwordGrants: 1, passwordRejected: 0 });
  });

  it('20 concurrent requests on an expired token: exactly one refresh', async () => {
    const p = await startPlatform({ accessTtlS: 3600 });
    const { client } = p.agent();
    expect(await get(client, p)).toBe(200);
    p.clock.advance(HOUR + MIN);
    const statuses = await Promise.all(Array.from({ length: 20 }, () => get(client, p)));
    expect(statuses).toEqual(Array(20).fill(200));
    expect(p.sim.stats).toMatchObject({ passwordGrants: 1, refreshes: 1, refreshReuses: 0 });
  });

  it('20 concurrent requests answered 401 (token revoked early): one refresh, each retried once', async () => {
    const p = await startPlatform({ accessTtlS: 3600 });
    const { client } = p.agent();
    expect(await get(client, p)).toBe(200);
    p.sim.expireAccessTokens();
    const statuses = await Promise.all(Array.from({ length: 20 }, () => get(client, p)));
    expect(statuses).toEqual(Array(20).fill(200));
    expect(p.sim.stats).toMatchObject({ passwordGrants: 1, refreshes: 1, refreshReuses: 0, unauthorized: 20 });
    expect(p.sim.stats.requests.devices).toBe(41);
  });

  it('a second 401 after the retry is returned, not looped on', async () => {
    const p = await startPlatform();
    const { client } = p.agent();
    expect(await get(client, p)).toBe(200);
    p.sim.faults.set('devices', { unauthorizedRate: 1 });
    expect(await get(client, p)).toBe(401);
    expect(p.sim.stats).toMatchObject({ refreshes: 1, unauthorized: 2 });
  });

  it('two agents on one database (separate connections): the stored pair is shared, one refresh between them', async () => {
    const p = await startPlatform({ accessTtlS: 3600 });
    const a = p.agent();
    const b = p.agent();
    expect(await get(a.client, p)).toBe(200);
    expect(await get(b.client, p)).toBe(200); // same boot, known age: adopts the stored pair
    expect(p.sim.stats).toMatchObject({ passwordGrants: 1, refreshes: 0 });
    p.clock.advance(HOUR);
    const statuses = await Promise.all([
      ...Array.from({ length: 10 }, () => get(a.client, p)),
      ...Array.from({ length: 10 }, () => get(b.client, p)),
    ]);
    expect(statuses).toEqual(Array(20).fill(200));
    expect(p.sim.stats).toMatchObject({ passwordGrants: 1, refreshes: 1, refreshReuses: 0 });
    // A rotates again; B, holding a pair whose refresh token is now spent, re-reads and adopts A's.
    p.clock.advance(HOUR);
    expect(await get(a.client, p)).toBe(200);
    expect(await get(b.client, p)).toBe(200);
    expect(p.sim.stats).toMatchObject({ passwordGrants: 1, refreshes: 2, refreshReuses: 0 });
  });

  it('restart on the same boot: uses the stored pair (no password grant, no refresh)', async () => {
    const p = await startPlatform({ accessTtlS: 3600 });
    const first = p.agent();
    expect(await get(first.client, p)).toBe(200);
    await first.tokens.stop();
    first.db.close();
    p.clock.advance(10 * MIN);
    const second = p.agent();
    expect(await get(second.client, p)).toBe(200);
    expect(p.sim.stats).toMatchObject({ passwordGrants: 1, refreshes: 0 });
    expect(second.tokens.tokenStatus().ageMs).toBe(10 * MIN);
  });

  it('restart with a valid stored token and a long start-up spread: the first token is the stored one at once, nothing sent', async () => {
    const p = await startPlatform({ accessTtlS: 3600 });
    const first = p.agent();
    expect(await get(first.client, p)).toBe(200);
    await first.tokens.stop();
    first.db.close();
    p.clock.advance(10 * MIN);
    const tokenRequests = () => p.sim.stats.requests['auth.password'] + p.sim.stats.requests['auth.refresh'];
    const before = tokenRequests();
    // An hour's spread, drawn at its very end: waiting for it would hold accessToken() for ~59 min.
    const spread = new StartSpread({ windowS: 3600, clock: p.clock, logger: silentLogger(), random: () => 0.99 });
    const second = p.agent({ startSpread: spread });
    const pending = Symbol('pending');
    // setImmediate only lets the SQLite read and the promise chain run; no time passes on the clock.
    const first$ = second.tokens.accessToken();
    let settled: unknown = pending;
    void first$.then((g) => (settled = g));
    for (let i = 0; i < 20 && settled === pending; i++) await new Promise((r) => setImmediate(r));
    expect(settled).not.toBe(pending);
    expect(tokenRequests() - before).toBe(0);
    expect(second.tokens.tokenStatus()).toMatchObject({ state: 'valid', passwordGrants: 0, refreshes: 0 });
  });

  it('a stored token that ran out while off waits for the start-up spread before its refresh', async () => {
    const p = await startPlatform({ accessTtlS: 3600 });
    const first = p.agent();
    expect(await get(first.client, p)).toBe(200);
    first.db.close();
    const spread = new StartSpread({ windowS: 3600, clock: p.clock, logger: silentLogger(), random: () => 0.99 });
    const second = p.agent({ boot: bootClockFrom(p.clock, 'another-boot'), startSpread: spread });
    const renewal = second.tokens.accessToken().catch((e: unknown) => e);
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(p.sim.stats.requests['auth.refresh']).toBe(0);
    await second.tokens.stop(); // aborts the spread's wait
    expect(await renewal).toBeInstanceOf(Error);
    expect(p.sim.stats.requests['auth.refresh']).toBe(0);
  });

  it('restart after a reboot: the age of the stored token is unknown, so one refresh with the stored refresh token', async () => {
    const p = await startPlatform({ accessTtlS: 3600 });
    const first = p.agent();
    expect(await get(first.client, p)).toBe(200);
    first.db.close();
    const second = p.agent({ boot: bootClockFrom(p.clock, 'another-boot') });
    expect(await get(second.client, p)).toBe(200);
    expect(p.sim.stats).toMatchObject({ passwordGrants: 1, refreshes: 1, refreshReuses: 0, unauthorized: 0 });
  });

  it('a simulated day with one-hour tokens: one password grant, 24 refreshes, no reuse', async () => {
    const p = await startPlatform({ accessTtlS: 3600, refreshTtlS: 86_400 });
    const { client } = p.agent();
    for (let t = 0; t <= 24 * 60; t += 5) {
      expect(await get(client, p)).toBe(200);
      p.clock.advance(5 * MIN);
    }
    expect(p.sim.stats).toMatchObject({ passwordGrants: 1, refreshes: 24, refreshReuses: 0, unauthorized: 0, refreshExpired: 0 });
  });

  it('an idle agent keeps its session alive through start()/maintain(): no password grant after a quiet day', async () => {
    const p = await startPlatform({ accessTtlS: 3600, refreshTtlS: 7200 });
    const { client, tokens } = p.agent();
    expect(await get(client, p)).toBe(200);
    for (let m = 0; m < 24 * 60; m += 10) {
      p.clock.advance(10 * MIN);
      await tokens.maintain();
    }
    expect(await get(client, p)).toBe(200);
    expect(p.sim.stats).toMatchObject({ passwordGrants: 1, refreshReuses: 0, refreshExpired: 0 });
    expect(p.sim.stats.refreshes).toBe(24);
  });

  it('never writes a token or the password into logs, errors or status', async () => {
    const p = await startPlatform({ accessTtlS: 3600, users: [{ username: 'agent', password: 'pw' }] });
    const log = captureLogger();
    const { client, tokens, db } = p.agent({ logger: log.logger });
    expect(await get(client, p)).toBe(200);
    p.sim.expireAccessTokens();
    expect(await get(client, p)).toBe(200);
    p.sim.faults.set('auth.refresh', { status500Rate: 1, limit: 1 });
    p.clock.advance(HOUR);
    const err = await client.send({ method: 'GET', url: p.urls.deviceUrl }).catch((e: unknown) => e);
    const row = db.prepare('SELECT access_token, refresh_token FROM token_pair').get() as { access_token: string; refresh_token: string };
    const secrets = [row.access_token, row.refresh_token];
    const outputs = [log.text(), JSON.stringify(tokens.tokenStatus()), JSON.stringify(err), String(err)];
    for (const out of outputs) for (const s of secrets) expect(out).not.toContain(s);
    expect(log.text()).toContain('access token ready');
  });
});

describe('token lifecycle across real processes', () => {
  const child = path.join(REPO_ROOT, 'test', 'platform', 'auth', 'fixtures', 'token-child.mjs');
  // dist/ as a whole, not one module of it: a moved module must fail the child's import, not skip the tests.
  const built = existsSync(path.join(REPO_ROOT, 'dist', 'cli', 'main.js'));
  if (!built) process.stderr.write('skipping cross-process token tests: run `npm run build` first (dist/ is absent)\n');

  function runChild(p: Platform, mode: string, n = 1) {
    const proc = spawn(process.execPath, [child, p.dataDir, p.urls.authUrl, p.urls.deviceUrl, p.urls.adminUrl, mode, String(n)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string; err: string }>((resolve) =>
      proc.on('close', (code, signal) => resolve({ code, signal, out, err })),
    );
    return { proc, done };
  }

  it.skipIf(!built)('two processes forcing refreshes at the same time never send one refresh token twice', async () => {
    const p = await startPlatform({ accessTtlS: 3600 });
    const { client, db } = p.agent();
    expect(await get(client, p)).toBe(200);
    const other = runChild(p, 'loop', 12);
    for (let i = 0; i < 12; i++) {
      p.sim.expireAccessTokens();
      await get(client, p);
    }
    const r = await other.done;
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out.trim().split('\n')).toHaveLength(12);
    const s = p.sim.stats;
    expect(s.refreshReuses).toBe(0);
    expect(s.refreshUnknown).toBe(0);
    expect(s.passwordGrants).toBe(1);
    expect(s.refreshes).toBeGreaterThanOrEqual(12);
    // Every refresh is one rotation recorded in the shared database.
    expect((db.prepare('SELECT generation FROM token_pair').get() as { generation: number }).generation).toBe(1 + s.refreshes);
  });

  it.skipIf(!built)(
    'killed during a refresh the platform acted on: the same refresh token is retried, its 401 allows one password grant',
    async () => {
      const p = await startPlatform({ accessTtlS: 3600 });
      const { client: seed, db: seedDb } = p.agent();
      expect(await get(seed, p)).toBe(200); // the stored pair the child will find
      seedDb.close();
      p.sim.expireAccessTokens();
      // The platform rotates, then the answer is held back long enough to kill the child.
      p.sim.faults.set('auth.refresh', { latencyMs: 30_000, limit: 1 });
      const rotated = new Promise<void>((resolve) => p.sim.onRequest((route) => route === 'auth.refresh' && resolve()));
      const c = runChild(p, 'once');
      await rotated;
      c.proc.kill('SIGKILL');
      const r = await c.done;
      expect(r.signal).toBe('SIGKILL');
      expect(p.sim.stats.refreshes).toBe(1); // the platform did rotate: the child's stored refresh token is spent
      const log = captureLogger();
      const after = p.agent({ logger: log.logger });
      expect(await get(after.client, p)).toBe(200);
      // Spec 5.6/5.7: the stored refresh token was never replaced by a received one, so it is sent once
      // more; the platform's 401 to it is what allows the password grant. Exactly one of each.
      expect(p.sim.stats).toMatchObject({ refreshReuses: 1, passwordGrants: 2, refreshes: 1 });
      expect(log.text()).toContain('a token refresh was interrupted');
    },
  );

  it.skipIf(!built)('killed during a refresh the platform never acted on: the same refresh token works, no password grant', async () => {
    const p = await startPlatform({ accessTtlS: 3600 });
    const { client: seed, db: seedDb } = p.agent();
    expect(await get(seed, p)).toBe(200);
    seedDb.close();
    p.sim.expireAccessTokens();
    // The request arrives and the connection is dropped before the platform acts on it; the child
    // retries after its backoff (1 s), and is killed while it waits.
    p.sim.faults.set('auth.refresh', { dropRate: 1 });
    const dropped = new Promise<void>((resolve) =>
      p.sim.onRequest((route, status) => route === 'auth.refresh' && status === 'dropped' && resolve()),
    );
    const c = runChild(p, 'once');
    await dropped;
    c.proc.kill('SIGKILL');
    await c.done;
    p.sim.faults.set('auth.refresh', undefined);
    const after = p.agent();
    expect(await get(after.client, p)).toBe(200);
    expect(p.sim.stats).toMatchObject({ refreshReuses: 0, passwordGrants: 1, refreshes: 1 });
  });
});
