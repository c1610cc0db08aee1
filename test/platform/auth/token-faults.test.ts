import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { passwordFromFile } from '../../../src/config/password-source.js';
import { Secret } from '../../../src/config/secret.js';
import { PlatformError, type AgentError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/log.js';
import { PlatformHttp } from '../../../src/platform/transport/http.js';
import { SecretRedactor } from '../../../src/platform/auth/secret-redactor.js';
import { parseTokenPair } from '../../../src/platform/auth/token-pair.js';
import { openDatabase } from '../../../src/store/database.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { startPlatform, type Platform } from '../fixture.js';

/**
 * Token faults against the simulator on loopback and a real SQLite file: lost refresh
 * answers, a password file fixed in place, hostile token answers, echoing servers, a full disk.
 * Time moves by ManualClock.advance; each scenario counts what the platform saw.
 */

const SEC = 1000;
const MIN = 60 * SEC;
const HOUR = 60 * MIN;

async function get(client: ReturnType<Platform['agent']>['client'], p: Platform): Promise<number> {
  return (await client.send({ method: 'GET', url: p.urls.deviceUrl })).status;
}

async function failure(p: Promise<unknown>): Promise<AgentError> {
  return p.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e as AgentError,
  );
}

describe('a lost refresh answer (spec 5.6, 5.7): the same refresh token again, never the password', () => {
  it('connection dropped after the refresh request arrived: retried with the same token after the backoff, no password grant', async () => {
    const p = await startPlatform({ accessTtlS: 3600 });
    const { client, tokens } = p.agent();
    expect(await get(client, p)).toBe(200);
    p.clock.advance(HOUR);
    p.sim.faults.set('auth.refresh', { dropRate: 1, limit: 2 });
    const e1 = await failure(client.send({ method: 'GET', url: p.urls.deviceUrl }));
    expect(e1).toMatchObject({ code: 'PLATFORM_UNREACHABLE', errorClass: 'transient' });
    const wait1 = (e1 as PlatformError).retryAfterMs ?? 0;
    expect(wait1).toBeGreaterThan(0);
    // Within the backoff nothing is sent at all.
    await failure(client.send({ method: 'GET', url: p.urls.deviceUrl }));
    expect(p.sim.stats.requests['auth.refresh']).toBe(1);
    p.clock.advance(wait1);
    const e2 = (await failure(client.send({ method: 'GET', url: p.urls.deviceUrl }))) as PlatformError;
    p.clock.advance(e2.retryAfterMs ?? 0);
    expect(await get(client, p)).toBe(200);
    // Three refresh requests with one refresh token: the platform saw no reuse of a rotated token.
    expect(p.sim.stats).toMatchObject({ passwordGrants: 1, refreshes: 1, refreshReuses: 0, passwordRejected: 0 });
    expect(p.sim.stats.requests['auth.refresh']).toBe(3);
    expect(p.sim.stats.requests['auth.password']).toBe(1);
    expect(tokens.tokenStatus()).toMatchObject({ state: 'valid', passwordGrants: 1, refreshes: 1 });
  });

  it('the platform rotated but the answer was lost: the retry answers 401, which allows exactly one password grant', async () => {
    const p = await startPlatform({ accessTtlS: 3600 });
    const { client } = p.agent();
    expect(await get(client, p)).toBe(200);
    p.clock.advance(HOUR);
    p.sim.faults.set('auth.refresh', { dropAnswerRate: 1, limit: 1 });
    const e = (await failure(client.send({ method: 'GET', url: p.urls.deviceUrl }))) as PlatformError;
    expect(p.sim.stats).toMatchObject({ refreshes: 1, passwordGrants: 1 });
    p.clock.advance(e.retryAfterMs ?? 0);
    expect(await get(client, p)).toBe(200);
    expect(p.sim.stats).toMatchObject({ refreshes: 1, refreshReuses: 1, passwordGrants: 2 });
    // And from then on refreshes again, no more passwords.
    p.clock.advance(HOUR);
    expect(await get(client, p)).toBe(200);
    expect(p.sim.stats).toMatchObject({ refreshes: 2, passwordGrants: 2 });
  });

  it('a 5xx, then a 401 of the refresh: only the 401 leads to the password grant', async () => {
    const p = await startPlatform({ accessTtlS: 3600 });
    const { client } = p.agent();
    expect(await get(client, p)).toBe(200);
    p.clock.advance(HOUR);
    p.sim.faults.set('auth.refresh', { status503Rate: 1, limit: 1 });
    const e = (await failure(client.send({ method: 'GET', url: p.urls.deviceUrl }))) as PlatformError;
    expect(p.sim.stats.passwordGrants).toBe(1);
    p.sim.expireRefreshTokens();
    p.clock.advance(e.retryAfterMs ?? 0);
    expect(await get(client, p)).toBe(200);
    expect(p.sim.stats).toMatchObject({ refreshExpired: 1, passwordGrants: 2 });
  });
});

describe('a password fixed in place', () => {
  it('the password file is read before every attempt: a corrected file is accepted without a restart', async () => {
    const p = await startPlatform({ accessTtlS: 3600 });
    const file = path.join(p.dataDir, 'password');
    writeFileSync(file, 'wrong-one\n', { mode: 0o600 });
    const secret = passwordFromFile(file, (issues) => {
      try {
        return readFileSync(file, 'utf8').replace(/\n$/, '');
      } catch {
        issues.push({ path: 'credentials.passwordFile', message: `cannot read ${file}` });
        return undefined;
      }
    });
    const log = captureLogger();
    const { client, tokens } = p.agent({ password: secret, logger: log.logger });
    const e = await failure(client.send({ method: 'GET', url: p.urls.deviceUrl }));
    expect(e.code).toBe('CREDENTIALS_REJECTED');
    expect(e.message).toContain(`the password file ${file}, it is read again before the next attempt at`);
    expect(log.text()).toContain(`fix credentials.username or the password file ${file}, it is read again before the next attempt at`);
    expect(tokens.tokenStatus().state).toBe('rejected');
    // Unchanged file: the rejection wait holds (minutes), the token service hears nothing.
    p.clock.advance(10 * SEC);
    await failure(client.send({ method: 'GET', url: p.urls.deviceUrl }));
    expect(p.sim.stats.passwordRejected).toBe(1);
    // Fixed in place: the next look at it (within seconds) ends the wait; the same manager uses it.
    writeFileSync(file, 'pw\n', { mode: 0o600 });
    p.clock.advance(5 * SEC);
    expect(await get(client, p)).toBe(200);
    expect(p.sim.stats).toMatchObject({ passwordRejected: 1, passwordGrants: 1 });
    expect(log.text()).toContain('the password changed since it was rejected');
    expect(log.text()).not.toContain('wrong-one');
  });

  it('an inline password cannot change: the log says a restart is needed', async () => {
    const p = await startPlatform();
    const log = captureLogger();
    const { client } = p.agent({ password: new Secret('nope', { origin: 'credentials.password' }), logger: log.logger });
    await failure(client.send({ method: 'GET', url: p.urls.deviceUrl }));
    expect(log.text()).toContain('fix credentials.username or credentials.password, then restart the agent');
  });
});

describe('token answers are checked', () => {
  it('expires_in and token characters: clamped, or TOKEN_PAIR_MALFORMED without echoing the token', () => {
    const ok = { access_token: 'a.b.c', refresh_token: 'r-1_~+/=', expires_in: 3600 };
    expect(parseTokenPair({ ...ok, expires_in: 0.001 }, 'x').expiresInS).toBe(60);
    expect(parseTokenPair({ ...ok, expires_in: 1e9 }, 'x').expiresInS).toBe(86_400);
    expect(parseTokenPair({ ...ok, expires_in: '900' }, 'x').expiresInS).toBe(900);
    expect(parseTokenPair({ ...ok, expires_in: -5 }, 'x').expiresInS).toBe(60);
    expect(parseTokenPair({ ...ok, expires_in: undefined }, 'x').expiresInS).toBe(3600);
    for (const bad of [
      { ...ok, expires_in: '1e999' },
      { ...ok, expires_in: Infinity },
      { ...ok, expires_in: NaN },
      { ...ok, expires_in: 'soon' },
      { ...ok, expires_in: true },
      { ...ok, access_token: 'abc\nX-Injected: 1' },
      { ...ok, refresh_token: 'abc def' },
      { ...ok, access_token: 'ab"c' },
      { ...ok, access_token: '=abc' },
      { ...ok, access_token: 'x'.repeat(20_000) },
      { ...ok, refresh_token: '' },
      { ...ok, access_token: 42 },
    ]) {
      const e = (() => {
        try {
          parseTokenPair(bad, 'token refresh');
        } catch (x) {
          return x as PlatformError;
        }
        throw new Error(`accepted ${JSON.stringify(bad)}`);
      })();
      expect(e).toMatchObject({ code: 'TOKEN_PAIR_MALFORMED', errorClass: 'transient' });
      expect(e.message).not.toContain('abc');
    }
  });

  const HOSTILE: [string, Parameters<Platform['sim']['setTokenAnswerFault']>[0], number][] = [
    // [case, fault, most token requests allowed in 10 simulated minutes of one request a second]
    ['expires_in 0.001 (clamped to 60 s: a refresh every 54 s)', { expiresIn: 0.001 }, 13],
    ['expires_in "1e999" (malformed: retried at the token service backoff)', { expiresIn: '1e999' }, 12],
    ['expires_in 1e999 as a JSON number (Infinity)', { expiresInLiteral: '1e999' }, 12],
    ['an access token with a newline', { accessTokenSuffix: '\n' }, 12],
    ['a refresh token with a space', { refreshTokenSuffix: ' x' }, 12],
  ];
  for (const [name, fault, most] of HOSTILE) {
    it(`${name}: no storm of token requests, nothing malformed stored`, async () => {
      const p = await startPlatform({ accessTtlS: 3600 });
      p.sim.setTokenAnswerFault(fault);
      const { client, db } = p.agent();
      let ok = 0;
      for (let s = 0; s < 600; s++) {
        ok += (await client.send({ method: 'GET', url: p.urls.deviceUrl }).catch(() => undefined))?.status === 200 ? 1 : 0;
        p.clock.advance(SEC);
      }
      const asked = p.sim.stats.requests['auth.password'] + p.sim.stats.requests['auth.refresh'];
      process.stdout.write(`hostile token answer, ${name}: ${asked} token requests in 600 simulated s, ${ok} requests served\n`);
      expect(asked).toBeGreaterThan(0);
      expect(asked).toBeLessThanOrEqual(most);
      const row = db.prepare('SELECT access_token, refresh_token, expires_in_s FROM token_pair').get() as
        | { access_token: string; refresh_token: string; expires_in_s: number }
        | undefined;
      if (row) {
        expect(row.access_token).toMatch(/^[A-Za-z0-9\-._~+/]*=*$/);
        expect(row.refresh_token).toMatch(/^[A-Za-z0-9\-._~+/]*=*$/);
        expect(Number.isFinite(row.expires_in_s)).toBe(true);
      }
      if (fault && 'expiresIn' in fault && fault.expiresIn === 0.001) expect(ok).toBe(600);
      else expect(ok).toBe(0);
      // The fault gone, the next attempt after the backoff works.
      p.sim.setTokenAnswerFault(undefined);
      p.clock.advance(5 * MIN);
      expect(await get(client, p)).toBe(200);
    });
  }

  it('a malformed pair stored by an older version is discarded at load: one password grant, never sent', async () => {
    const p = await startPlatform({ accessTtlS: 3600 });
    const first = p.agent();
    expect(await get(first.client, p)).toBe(200);
    first.db.prepare('UPDATE token_pair SET access_token = access_token || char(10), expires_in_s = 0').run();
    const log = captureLogger();
    const after = p.agent({ logger: log.logger });
    expect(await get(after.client, p)).toBe(200);
    expect(p.sim.stats).toMatchObject({ passwordGrants: 2, refreshes: 0 });
    expect(log.text()).toContain('the stored token pair is malformed and is discarded');
    const row = after.db.prepare('SELECT access_token, generation FROM token_pair').get() as { access_token: string; generation: number };
    expect(row.access_token).not.toContain('\n');
    expect(row.generation).toBe(2);
  });

  it('a stored lifetime out of range alone keeps the refresh token (clamped, refreshed, no password)', async () => {
    const p = await startPlatform({ accessTtlS: 3600 });
    const first = p.agent();
    expect(await get(first.client, p)).toBe(200);
    first.db.prepare('UPDATE token_pair SET expires_in_s = 9e999').run();
    const after = p.agent();
    p.clock.advance(2 * MIN);
    expect(await get(after.client, p)).toBe(200);
    expect(p.sim.stats).toMatchObject({ passwordGrants: 1, refreshes: 1 });
  });
});

describe('secrets the server echoes back stay secret', () => {
  const PASSWORD = 'p@ss wörd/+&"<x>';

  it('redactor: plain, URL-, form-, JSON- and HTML-escaped spellings and JWT shapes', () => {
    const r = new SecretRedactor();
    r.remember(PASSWORD, 'password');
    const samples = [
      PASSWORD,
      encodeURIComponent(PASSWORD),
      new URLSearchParams({ password: PASSWORD }).toString(),
      JSON.stringify({ password: PASSWORD }),
      JSON.stringify(PASSWORD).replace(/\//g, '\\/'),
      PASSWORD.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;'),
      'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl',
    ];
    for (const s of samples) {
      const out = r.redact(`before ${s} after`);
      expect(out, s).toContain('[redacted]');
      expect(out).not.toContain('wörd');
      expect(out).not.toContain('w%C3%B6rd');
      expect(out).not.toContain('eyJzdWIiOiJ4In0');
    }
    expect(r.redact('nothing secret here')).toBe('nothing secret here');
    // Many token rotations later the password is still known; the oldest tokens are forgotten.
    for (let i = 0; i < 40; i++) r.remember(`token-${i}-abcdef`);
    expect(r.redact(`x ${PASSWORD} y`)).toBe('x [redacted] y');
    expect(r.redact('token-39-abcdef')).toBe('[redacted]');
    expect(r.redact('token-0-abcdef')).toBe('token-0-abcdef');
  });

  it('an echoing token service and device service: no password or token in errors, logs or status', async () => {
    const p = await startPlatform({ accessTtlS: 3600, users: [{ username: 'agent', password: PASSWORD }] });
    const redactor = new SecretRedactor();
    const http = new PlatformHttp({ dispatcher: p.dispatcher, requestTimeoutMs: 5000, maxResponseBytes: 1 << 20, redactor });
    const log = captureLogger();
    const { client, tokens } = p.agent({ password: PASSWORD, http, redactor, logger: log.logger });
    const seen: string[] = [];
    // The password grant answers with the form echoed (JSON and text), then works.
    p.sim.faults.set('auth.password', { echo: { rate: 1, status: 500, format: 'json' }, limit: 1 });
    const e1 = (await failure(client.send({ method: 'GET', url: p.urls.deviceUrl }))) as PlatformError;
    seen.push(JSON.stringify(e1.toJSON()), e1.message, JSON.stringify(tokens.tokenStatus()));
    p.clock.advance(e1.retryAfterMs ?? 0);
    p.sim.faults.set('auth.password', { echo: { rate: 1, status: 401, format: 'text' }, limit: 1 });
    const e2 = (await failure(client.send({ method: 'GET', url: p.urls.deviceUrl }))) as PlatformError;
    seen.push(JSON.stringify(e2.toJSON()), JSON.stringify(tokens.tokenStatus()));
    p.clock.advance(HOUR);
    expect(await get(client, p)).toBe(200);
    // A refresh answered with the refresh token echoed.
    p.clock.advance(HOUR);
    p.sim.faults.set('auth.refresh', { echo: { rate: 1, status: 502, format: 'json' }, limit: 1 });
    const e3 = (await failure(client.send({ method: 'GET', url: p.urls.deviceUrl }))) as PlatformError;
    seen.push(JSON.stringify(e3.toJSON()), JSON.stringify(tokens.tokenStatus()));
    p.clock.advance(e3.retryAfterMs ?? 0);
    // A service answering with the bearer token echoed, as JSON and as text.
    for (const format of ['json', 'text'] as const) {
      p.sim.faults.set('devices', { echo: { rate: 1, status: 400, format }, limit: 1 });
      const res = await client.send({ method: 'POST', url: p.urls.deviceUrl, json: { note: PASSWORD } });
      expect(res.status).toBe(400);
      seen.push(res.text, JSON.stringify(res.body));
    }
    const everything = [...seen, log.text()].join('\n');
    expect(everything).toContain('[redacted]');
    expect(everything).toContain('request refused');
    for (const secret of [PASSWORD, encodeURIComponent(PASSWORD), new URLSearchParams({ p: PASSWORD }).toString().slice(2)])
      expect(everything).not.toContain(secret);
    const issued = p.sim.issuedTokens();
    expect(issued.length).toBeGreaterThanOrEqual(3);
    for (const t of issued) expect(everything).not.toContain(t);
    // Each token's signature alone is not there either.
    for (const t of issued) expect(everything).not.toContain(t.split('.')[2]);
    // The OAuth body of the token service kept only error and error_description.
    expect(e1.message).not.toContain('authorization=');
  });
});

describe('a full disk while tokens rotate', () => {
  // Probed by mounting one: being root is not enough (a container without CAP_SYS_ADMIN refuses).
  const canMount = probeTmpfs();
  if (!canMount)
    console.warn('token-faults.test.ts: full-disk token test skipped, mount -t tmpfs is not permitted here (CI runs it as root)');

  function probeTmpfs(): boolean {
    if (process.getuid?.() !== 0) return false;
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ta-tokprobe-'));
    try {
      if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir], { stdio: 'ignore' }).status !== 0) return false;
      spawnSync('umount', ['-l', dir]);
      return true;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  /** A tmpfs of `sizeKb`; the probe said mounting works, so a failure here fails the test. */
  function tmpfs(sizeKb: number): string {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ta-tokfull-'));
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeKb}k`, 'tmpfs', dir], { stdio: 'ignore' });
    } catch (e) {
      rmSync(dir, { recursive: true, force: true });
      throw e;
    }
    onTestFinished(() => {
      spawnSync('umount', ['-l', dir]);
      rmSync(dir, { recursive: true, force: true });
    });
    return dir;
  }

  function fill(dir: string): string {
    const filler = path.join(dir, 'filler');
    try {
      // Writes until ENOSPC: the disk is then really full.
      execFileSync('sh', ['-c', `dd if=/dev/zero of=${filler} bs=4k 2>/dev/null; true`]);
    } catch {
      // full
    }
    return filler;
  }

  it.skipIf(!canMount)('a refreshed pair that cannot be stored is used from memory, then stored when space returns', async () => {
    const dataDir = tmpfs(2048);
    const p = await startPlatform({ accessTtlS: 3600 });
    mkdirSync(path.join(dataDir, 'data'), { mode: 0o700 });
    const db = openDatabase({ dataDir: path.join(dataDir, 'data'), logger: silentLogger() });
    onTestFinished(() => {
      db.close();
    });
    const log = captureLogger();
    const { client, tokens } = p.agent({ db, logger: log.logger });
    expect(await get(client, p)).toBe(200);
    const filler = fill(dataDir);
    // Ten rotations on a full disk: every one used, none lost, no password grant.
    for (let i = 0; i < 10; i++) {
      p.clock.advance(HOUR);
      expect(await get(client, p)).toBe(200);
    }
    expect(p.sim.stats).toMatchObject({ passwordGrants: 1, refreshes: 10, refreshReuses: 0 });
    expect(tokens.tokenStatus().refreshes).toBe(10);
    expect(log.text()).toContain('could not be stored');
    // The token lock row cannot be written either: the in-process lock carries on.
    expect(log.text()).toContain('renewing under the in-process lock only');
    const stored = () => (db.prepare('SELECT generation FROM token_pair').get() as { generation: number }).generation;
    expect(stored()).toBe(1);
    rmSync(filler);
    p.clock.advance(10 * SEC);
    expect(await get(client, p)).toBe(200);
    expect(stored()).toBe(11);
    expect(log.text()).toContain('is stored now');
    // A restart finds the newest pair: no refresh, no password needed.
    const after = p.agent({ db: openDatabase({ dataDir: path.join(dataDir, 'data'), logger: silentLogger() }) });
    onTestFinished(() => {
      after.db.close();
    });
    expect(await get(after.client, p)).toBe(200);
    expect(p.sim.stats).toMatchObject({ passwordGrants: 1, refreshes: 10 });
  });
});
