import { describe, expect, it } from 'vitest';
import { Secret } from '../src/config/secret.js';
import { AgentError } from '../src/errors.js';
import { captureLogger } from './helpers/capture-logger.js';

const TOKEN = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJnYXRld2F5In0.c2lnbmF0dXJlLXNlY3JldA';

describe('logger', () => {
  it('writes JSON lines with level labels and a component name from child loggers', () => {
    const { logger, text } = captureLogger('trace');
    logger.child({ component: 'uploader' }).info({ pending: 3 }, 'draining');
    const line = JSON.parse(text().trim()) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 'info', component: 'uploader', pending: 3, msg: 'draining' });
    expect(typeof line.time).toBe('string');
  });

  it('redacts tokens, passwords and authorization headers wherever they appear', () => {
    const { logger, text } = captureLogger('trace');
    const child = logger.child({ component: 'auth' });
    child.info({ access_token: TOKEN, refresh_token: TOKEN, id_token: TOKEN }, 'pair');
    child.info({ response: { access_token: TOKEN, refresh_token: TOKEN } }, 'nested');
    child.info({ req: { headers: { authorization: `Bearer ${TOKEN}` } } }, 'request');
    child.info({ headers: { Authorization: `Bearer ${TOKEN}` } }, 'headers');
    child.warn({ credentials: { username: 'u', password: 'hunter2-secret' } }, 'login');
    child.info({ password: new Secret('also-secret') }, 'secret object');
    child.error({ err: new AgentError('UPLOAD_FAILED', 'failed') }, 'error');
    const out = text();
    expect(out).not.toContain(TOKEN);
    expect(out).not.toContain('c2lnbmF0dXJlLXNlY3JldA');
    expect(out).not.toContain('hunter2-secret');
    expect(out).not.toContain('also-secret');
    expect(out.match(/\[redacted\]/g)?.length).toBeGreaterThanOrEqual(8);
    expect(out).toContain('"username":"u"');
  });
});
