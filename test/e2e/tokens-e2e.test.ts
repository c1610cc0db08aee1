import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { PlatformSimulator } from '../../src/sim/index.js';
import { runCli } from '../helpers/run-cli.js';
import { startReplayDaemon, type ReplayDaemon } from './daemon.js';
import { waitFor } from '../helpers/wait.js';
import type { PlatformTuning } from '../../src/platform/tuning.js';
import { TOKEN_SERVICE_RETRY_MAX_S, TOKEN_SERVICE_RETRY_MIN_S } from '../../src/platform/auth/token-backoff.js';

/**
 * Token faults against real processes: the built daemon (`run`) replaying a drive, the
 * platform simulator on loopback with its fault injection, the real database file, the CLI. Each
 * scenario prints its figures (token requests the platform saw, password grants, events delivered).
 */

type Rig = ReplayDaemon;

async function rig(o: {
  password?: string;
  simPassword?: string;
  /** Retry waits over the e2e daemons' (AgentOptions.tuning). */
  platform?: Partial<PlatformTuning>;
  minutes?: number;
  beforeStart?: (sim: PlatformSimulator) => void;
}): Promise<Rig> {
  return startReplayDaemon({
    prefix: 'ta-tokens-e2e-',
    sim: { users: [{ username: 'agent', password: o.simPassword ?? 'pw' }], seed: 11 },
    drive: { minutes: o.minutes ?? 3, hz: 1, seed: 5 },
    replaySpeed: 4,
    config: { ...(o.password !== undefined ? { password: o.password } : {}), ...(o.platform ? { tuning: { platform: o.platform } } : {}) },
    ...(o.beforeStart ? { beforeStart: o.beforeStart } : {}),
    ready: false,
    stopSignal: 'SIGKILL',
  });
}

function tokenRequests(sim: PlatformSimulator): number {
  return sim.stats.requests['auth.password'] + sim.stats.requests['auth.refresh'];
}

async function stop(r: Rig): Promise<void> {
  r.daemon.child.kill('SIGTERM');
  await r.daemon.exited;
}

describe('tokens against the real daemon', () => {
  it('a dropped refresh answer: the refresh is retried with the same token, no password grant', { timeout: 120_000 }, async () => {
    const r = await rig({});
    await waitFor('first deliveries', () => r.sim.events.size >= 5, { timeoutMs: 60_000, detail: r.daemon.log });
    // The next refresh request arrives and the connection drops, twice; the access token dies now.
    r.sim.setFaults('auth.refresh', { dropRate: 1, limit: 2 });
    r.sim.expireAccessTokens();
    const before = r.sim.events.size;
    await waitFor('a refresh and deliveries after it', () => r.sim.stats.refreshes >= 1 && r.sim.events.size > before + 5, {
      timeoutMs: 60_000,
      detail: r.daemon.log,
    });
    const s = r.sim.stats;
    process.stdout.write(
      `dropped refresh answer: refresh requests ${s.requests['auth.refresh']} (2 dropped), refreshes ${s.refreshes}, password grants ${s.passwordGrants}, reuses ${s.refreshReuses}, events ${r.sim.events.size}\n`,
    );
    expect(s.requests['auth.refresh']).toBe(3);
    expect(s).toMatchObject({ passwordGrants: 1, refreshes: 1, refreshReuses: 0 });
    expect(r.daemon.log()).toContain('retrying with the same refresh token');

    // The platform acts on the refresh, then the answer is lost: the retry's 401 allows one password grant.
    r.sim.setFaults('auth.refresh', { dropAnswerRate: 1, limit: 1 });
    r.sim.expireAccessTokens();
    const before2 = r.sim.events.size;
    await waitFor('recovery after a lost rotation', () => r.sim.stats.passwordGrants >= 2 && r.sim.events.size > before2 + 5, {
      timeoutMs: 60_000,
      detail: r.daemon.log,
    });
    const s2 = r.sim.stats;
    process.stdout.write(
      `lost rotation: refresh requests ${s2.requests['auth.refresh']}, refreshes ${s2.refreshes}, reuses answered 401 ${s2.refreshReuses}, password grants ${s2.passwordGrants}\n`,
    );
    expect(s2).toMatchObject({ passwordGrants: 2, refreshReuses: 1 });
    await stop(r);
  });

  it('a corrected password file is accepted without a restart', { timeout: 120_000 }, async () => {
    const r = await rig({ password: 'wrong-password', platform: { passwordRetryMinS: 10 } });
    await waitFor('the wrong password rejected', () => r.sim.stats.passwordRejected >= 1, { timeoutMs: 60_000, detail: r.daemon.log });
    await waitFor('the rejection log line', () => r.daemon.log().includes('it is read again before the next attempt'), {
      timeoutMs: 10_000,
      detail: r.daemon.log,
    });
    const pid = r.daemon.child.pid;
    const fixedAt = Date.now();
    writeFileSync(path.join(r.dir, 'password'), 'pw\n', { mode: 0o600 });
    await waitFor('deliveries with the corrected password', () => r.sim.events.size >= 5, { timeoutMs: 60_000, detail: r.daemon.log });
    const s = r.sim.stats;
    process.stdout.write(
      `corrected password file: accepted ${((Date.now() - fixedAt) / 1000).toFixed(1)} s after the fix (passwordRetryMinS 10), rejected ${s.passwordRejected}, grants ${s.passwordGrants}, events ${r.sim.events.size}, same pid\n`,
    );
    expect(r.daemon.child.pid).toBe(pid);
    expect(r.daemon.child.exitCode).toBeNull();
    expect(s.passwordGrants).toBe(1);
    expect(r.daemon.log()).toMatch(
      /fix credentials\.username or the password file \S+password, it is read again before the next attempt at/,
    );
    expect(r.daemon.log()).not.toContain('wrong-password');
    await stop(r);
  });

  const HOSTILE: [string, Parameters<PlatformSimulator['setTokenAnswerFault']>[0]][] = [
    ['expires_in 0.001', { expiresIn: 0.001 }],
    ['expires_in "1e999"', { expiresIn: '1e999' }],
    ['expires_in 1e999 (JSON number)', { expiresInLiteral: '1e999' }],
    ['access token with a newline', { accessTokenSuffix: '\n' }],
  ];
  it('hostile token answers: no storm of token requests in 10 s, nothing malformed stored', { timeout: 180_000 }, async () => {
    const figures: string[] = [];
    for (const [name, fault] of HOSTILE) {
      // The default token service backoff (2 s doubling to 300 s), as on a gateway.
      const r = await rig({
        platform: { tokenServiceRetryMinS: TOKEN_SERVICE_RETRY_MIN_S, tokenServiceRetryMaxS: TOKEN_SERVICE_RETRY_MAX_S },
        beforeStart: (sim) => sim.setTokenAnswerFault(fault),
      });
      await waitFor('the first token request', () => tokenRequests(r.sim) >= 1, { timeoutMs: 60_000, detail: r.daemon.log });
      const t0 = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 10_000));
      const asked = tokenRequests(r.sim);
      const seconds = (Date.now() - t0) / 1000 + 0; // the window after the first request
      figures.push(`${name}: ${asked} token requests in the first ${seconds.toFixed(0)} s, events delivered ${r.sim.events.size}`);
      // Before the fix: 0.001 made 139 refreshes in 10 s. A clamped lifetime needs none; a malformed
      // answer is retried at 2, 4, 8 s.
      expect(asked).toBeLessThanOrEqual(5);
      await stop(r);
      const db = new BetterSqlite3(path.join(r.dir, 'data', 'agent.db'), { readonly: true });
      const rows = db.prepare('SELECT access_token, refresh_token, expires_in_s FROM token_pair').all() as {
        access_token: string;
        refresh_token: string;
        expires_in_s: number;
      }[];
      db.close();
      for (const row of rows) {
        expect(row.access_token).toMatch(/^[A-Za-z0-9\-._~+/]*=*$/);
        expect(row.refresh_token).toMatch(/^[A-Za-z0-9\-._~+/]*=*$/);
        expect(row.expires_in_s).toBeGreaterThanOrEqual(60);
        expect(row.expires_in_s).toBeLessThanOrEqual(86_400);
      }
      if (name === 'expires_in 0.001') expect(r.sim.events.size).toBeGreaterThan(0);
      else expect(r.daemon.log()).toContain('TOKEN_PAIR_MALFORMED');
    }
    process.stdout.write(`hostile token answers (real daemon):\n  ${figures.join('\n  ')}\n`);
  });
});

describe('an echoing platform', () => {
  const PASSWORD = 'p@ss wörd/+&"<x>';

  it('no password or token in the log, status --json, the database or CLI output', { timeout: 180_000 }, async () => {
    const r = await rig({ password: PASSWORD, simPassword: PASSWORD, platform: { registrationRetryMinS: 1 } });
    const { sim } = r;
    // Every route echoes the request back once or more, in JSON and as text.
    sim.setFaults('auth.password', { echo: { rate: 1, status: 500, format: 'json' }, limit: 1 });
    await waitFor('a password grant after the echo', () => sim.stats.passwordGrants >= 1, { timeoutMs: 60_000, detail: r.daemon.log });
    sim.setFaults('devices', { echo: { rate: 1, status: 500, format: 'text' }, limit: 1 });
    sim.setFaults('events', { echo: { rate: 0.3, status: 503, format: 'json' } });
    await waitFor('deliveries', () => sim.events.size >= 10, { timeoutMs: 60_000, detail: r.daemon.log });
    sim.setFaults('auth.refresh', { echo: { rate: 1, status: 502, format: 'json' }, limit: 1 });
    sim.expireAccessTokens();
    await waitFor('a refresh after the echo', () => sim.stats.refreshes >= 1, { timeoutMs: 60_000, detail: r.daemon.log });
    sim.setFaults('events', { echo: { rate: 0.3, status: 400, format: 'text' } });
    const before = sim.events.size;
    await waitFor('deliveries among echoed 400s', () => sim.events.size >= before + 10, { timeoutMs: 60_000, detail: r.daemon.log });
    // The CLI against the same echoing platform.
    sim.setFaults('devices', { echo: { rate: 1, status: 400, format: 'json' } });
    const register = await runCli(['register', '--config', r.configFile], { timeoutMs: 60_000 });
    const show = await runCli(['device', 'show', '--config', r.configFile], { timeoutMs: 60_000 });
    const status = await runCli(['status', '--json', '--config', r.configFile], { timeoutMs: 30_000 });
    expect(status.stdout).toContain('"outbox"');
    await stop(r);
    const statusDown = await runCli(['status', '--json', '--config', r.configFile], { timeoutMs: 30_000 });

    const fired = sim.stats.faults;
    const cli = [register, show, status, statusDown].map((c) => `${c.stdout}\n${c.stderr}`).join('\n');
    const log = readdirSync(r.dir)
      .filter((f) => f.startsWith('daemon-'))
      .map((f) => readFileSync(path.join(r.dir, f), 'utf8'))
      .join('\n');
    // The database: every text the agent keeps outside the token table (errors, dead letters, meta).
    const db = new BetterSqlite3(path.join(r.dir, 'data', 'agent.db'), { readonly: true });
    const tables = (
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name != 'token_pair'").all() as { name: string }[]
    ).map((t) => t.name);
    const dbText = tables
      .map((t) =>
        JSON.stringify(db.prepare(`SELECT * FROM "${t}"`).all(), (_k, v: unknown) => (Buffer.isBuffer(v) ? v.toString('latin1') : v)),
      )
      .join('\n');
    db.close();
    // The raw file bytes too (every page, the WAL included): the password is never stored at all.
    const files = readdirSync(path.join(r.dir, 'data')).filter((f) => f.startsWith('agent.db'));
    const raw = files.map((f) => readFileSync(path.join(r.dir, 'data', f)).toString('utf8')).join('\n');

    const passwordForms = [
      PASSWORD,
      encodeURIComponent(PASSWORD),
      new URLSearchParams({ p: PASSWORD }).toString().slice(2),
      JSON.stringify(PASSWORD).slice(1, -1),
    ];
    const tokens = sim.issuedTokens();
    const where: Record<string, string> = { log, cli, database: dbText };
    const found: string[] = [];
    for (const [name, text] of Object.entries(where)) {
      for (const s of passwordForms) if (text.includes(s)) found.push(`${name}: the password (${s})`);
      for (const t of tokens) if (text.includes(t) || text.includes(t.split('.')[2] ?? t)) found.push(`${name}: a token`);
    }
    for (const s of passwordForms) if (raw.includes(s)) found.push(`database file bytes: the password (${s})`);
    const echoed =
      (log.match(/\[redacted\]/g) ?? []).length + (cli.match(/\[redacted\]/g) ?? []).length + (dbText.match(/\[redacted\]/g) ?? []).length;
    process.stdout.write(
      `echoing platform: echo faults fired ${JSON.stringify(fired)}; [redacted] in output ${echoed}; tokens issued ${tokens.length}; secrets found ${found.length}; events ${sim.events.size}\n`,
    );
    expect(found).toEqual([]);
    // The echoes did reach the agent and were redacted (not merely absent).
    expect(fired['auth.password']).toBe(1);
    expect(fired['auth.refresh']).toBe(1);
    expect(fired.events).toBeGreaterThan(0);
    expect(echoed).toBeGreaterThan(0);
    expect(log + cli).toContain('request refused');
  });
});
