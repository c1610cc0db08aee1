import { describe, expect, it } from 'vitest';
import { AgentError, PlatformError, errorFields } from '../src/errors.js';

describe('errorFields: one log shape for any error', () => {
  it('an expected AgentError: its code, class and message, no stack', () => {
    const f = errorFields(new PlatformError('PLATFORM_UNAVAILABLE', 'event upload: HTTP 503', { class: 'transient', status: 503 }));
    expect(f).toMatchObject({ code: 'PLATFORM_UNAVAILABLE', class: 'transient', retryable: true, message: 'event upload: HTTP 503' });
    expect(f).not.toHaveProperty('stack');
  });

  it('an internal AgentError and any other Error keep the stack, with the cause', () => {
    const internal = errorFields(new AgentError('UPLOAD_FAILED', 'impossible state', { cause: new TypeError('x is undefined') }));
    expect(internal.stack).toMatch(/impossible state\n\s+at /);
    expect(internal.cause).toMatchObject({ type: 'TypeError', message: 'x is undefined' });
    const sys = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(errorFields(sys)).toMatchObject({ code: 'ECONNREFUSED', type: 'Error', message: 'connect ECONNREFUSED' });
    expect(errorFields(sys).stack).toMatch(/\n\s+at /);
  });

  it('a thrown non-Error: its text', () => {
    expect(errorFields('boom')).toEqual({ type: 'string', message: 'boom' });
    expect(errorFields(undefined)).toEqual({ type: 'undefined', message: 'undefined' });
  });
});
