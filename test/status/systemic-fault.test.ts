import { describe, expect, it } from 'vitest';
import { assessHealth } from '../../src/status/health.js';
import { renderStatus } from '../../src/terminal/status-screen.js';
import { systemicHint } from '../../src/upload/systemic-hint.js';
import { liveSnapshot } from './fixtures.js';

const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);

describe('status of a platform that refuses every event', () => {
  const failing = liveSnapshot(NOW, '/var/lib/telematics-agent', (s) => {
    s.outbox = {
      ...s.outbox,
      pending: 15_401,
      deadLetters: 2,
      lastDeadLetter: { at: NOW - 60_000, status: 400, reason: 'event upload: HTTP 400 (creationDate: bad)' },
    };
    s.upload.fault = {
      kind: 'config',
      status: 405,
      code: 'PLATFORM_HTTP_ERROR',
      message: 'event upload: HTTP 405',
      hint: systemicHint('config', 405),
      since: NOW - 120_000,
    };
  });

  it('is FAILING with the status and what to check', () => {
    const h = assessHealth(failing);
    expect(h.level).toBe('failing');
    expect(h.exitCode).toBe(2);
    expect(h.reasons[0]).toMatch(/HTTP 405 to every event: check platform\.eventsPath, proxy, event shape/);
  });

  it('the screen shows FAILING, the status, the hint, and the dead letters with the last reason', () => {
    const text = renderStatus(failing, { color: false, satellites: false, nowMs: NOW }, assessHealth(failing));
    expect(text).toMatch(/FAILING since .*: HTTP 405 for every event/);
    expect(text.replace(/\s+/g, ' ')).toMatch(/platform\.eventsPath/);
    expect(text).toMatch(/dead letters 2/);
    expect(text).toMatch(/last dead letter .*creationDate: bad/);
  });

  it('an acceptance clears it: healthy again', () => {
    const ok = liveSnapshot(NOW, '/var/lib/telematics-agent');
    expect(assessHealth(ok).level).toBe('healthy');
  });
});
