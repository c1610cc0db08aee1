import { describe, expect, it } from 'vitest';
import { assessHealth } from '../../src/status/health.js';
import { expectedContactIntervalS } from '../../src/status/platform-link.js';
import type { StatusSnapshot } from '../../src/status/snapshot.js';
import { liveSnapshot } from './fixtures.js';

const now = Date.UTC(2026, 10, 22, 12);
const cases: Array<[string, (s: StatusSnapshot) => void, 0 | 1 | 2, RegExp | undefined]> = [
  ['healthy daemon', () => undefined, 0, undefined],
  [
    'no fix',
    (s) => {
      if (s.receiver) s.receiver.mode = 1;
    },
    1,
    /no fix/,
  ],
  [
    'no epoch yet',
    (s) => {
      if (s.receiver) delete s.receiver.mode;
    },
    1,
    /no fix/,
  ],
  [
    'backlog not draining',
    (s) => {
      s.outbox.pending = 500;
      s.outbox.oldestPendingAgeS = 600;
    },
    1,
    /backlog of 500/,
  ],
  [
    'an upload stalled (no event settled for two request deadlines)',
    (s) => {
      s.outbox.pending = 254;
      s.upload.stalled = { forS: 65, waitingFor: 'an answer to 1 event request sent 65 s ago' };
    },
    1,
    /upload stalled for 65 s: waiting for an answer to 1 event request/,
  ],
  [
    'ignition input flapping: read, its engine events held',
    (s) => {
      s.motion = {
        state: 'stopped',
        odometerM: 0,
        ignition: 'on',
        ignitionUnstable:
          'ignition input unstable: 14 changes in a minute (a loose wire?); engine events held until it holds still for 60 s',
      };
    },
    1,
    /^ignition input unstable: 14 changes in a minute \(a loose wire\?\); engine events held/,
  ],
  [
    'vehicle events the outbox could not store: lost, said with their count',
    (s) => {
      s.outbox.eventsRefused = 4;
    },
    1,
    /^4 trip\/engine events could not be stored and are lost: see the log$/,
  ],
  [
    'token refreshing',
    (s) => {
      if (s.token) s.token.state = 'refreshing';
    },
    1,
    /token refreshing/,
  ],
  [
    'parked: the access token lapsed and is renewed at the next request (the heartbeat), as planned',
    (s) => {
      if (s.token) Object.assign(s.token, { state: 'expired', renewal: 'next-request' });
    },
    0,
    undefined,
  ],
  [
    'an expired token that should have been renewed ahead',
    (s) => {
      if (s.token) Object.assign(s.token, { state: 'expired', renewal: 'ahead' });
    },
    1,
    /token expired/,
  ],
  [
    'not registered yet',
    (s) => {
      delete s.registration.deviceUUID;
    },
    1,
    /not registered/,
  ],
  [
    'transient upload error after the last success',
    (s) => {
      s.upload.lastError = { code: 'PLATFORM_503', class: 'transient', message: 'x', at: now };
    },
    1,
    /PLATFORM_503/,
  ],
  [
    'upload error older than the last success',
    (s) => {
      s.upload.lastError = { code: 'PLATFORM_503', class: 'transient', message: 'x', at: now - 60_000 };
    },
    0,
    undefined,
  ],
  [
    'clock off by a minute',
    (s) => {
      if (s.receiver) s.receiver.clockOffsetS = -61;
    },
    1,
    /behind GNSS by 61 s/,
  ],
  [
    'link retrying',
    (s) => {
      if (s.receiver) {
        s.receiver.link = 'retrying';
        s.receiver.lastError = 'ENOENT';
      }
    },
    1,
    /retrying \(ENOENT\)/,
  ],
  [
    'receiver silent',
    (s) => {
      if (s.receiver) s.receiver.lastSentenceAgeS = 30;
    },
    2,
    /silent for 30 s/,
  ],
  [
    'replay ended is not a silent receiver',
    (s) => {
      if (s.receiver) {
        s.receiver.link = 'ended';
        s.receiver.lastSentenceAgeS = 30;
      }
    },
    0,
    undefined,
  ],
  [
    'link closed',
    (s) => {
      if (s.receiver) s.receiver.link = 'closed';
    },
    2,
    /link closed/,
  ],
  [
    'credentials rejected',
    (s) => {
      if (s.token) s.token.state = 'rejected';
    },
    2,
    /credentials rejected/,
  ],
  [
    'configuration error from the platform',
    (s) => {
      s.upload.lastError = { code: 'PLATFORM_403', class: 'config', message: 'x', at: now };
    },
    2,
    /PLATFORM_403 \(config\)/,
  ],
  [
    'disk below the floor',
    (s) => {
      s.disk.freeBytes = 1;
    },
    2,
    /minFreeBytes/,
  ],
  [
    'disk full',
    (s) => {
      Object.assign(s.disk, {
        freeBytes: 0,
        full: true,
        heldInMemory: 120,
        commitFailing: { code: 'STORE_DISK_FULL', message: 'full', forS: 300 },
      });
    },
    2,
    /^disk full, 120 fixes held in memory, commits failing for 5 min/,
  ],
  [
    'commits failing for another reason',
    (s) => {
      s.disk.commitFailing = { code: 'SQLITE_IOERR', message: 'disk I/O error', forS: 30 };
    },
    2,
    /outbox cannot commit: SQLITE_IOERR/,
  ],
  [
    'database salvaged within the day',
    (s) => {
      s.disk.repaired = {
        at: s.takenAt - 3600_000,
        reason: 'SQLITE_CORRUPT: malformed',
        movedTo: '/d/agent.db.corrupt-x',
        salvaged: 990,
        deadLetters: 0,
        unreadable: 10,
      };
    },
    1,
    /database was damaged \(SQLITE_CORRUPT\) 60 min ago: 990 fixes salvaged, about 10 lost/,
  ],
  [
    'database salvaged over a day ago',
    (s) => {
      s.disk.repaired = {
        at: s.takenAt - 90_000_000,
        reason: 'SQLITE_NOTADB: x',
        movedTo: '/d/x',
        salvaged: 1,
        deadLetters: 0,
        unreadable: 0,
      };
    },
    0,
    undefined,
  ],
  [
    'platform answered within the expected interval, outbox empty',
    (s) => {
      s.outbox.pending = 0;
      s.platform = { lastAnswerAgeS: 1500, lastAnswerAt: now - 1_500_000, expectedIntervalS: 1925 };
    },
    0,
    undefined,
  ],
  [
    'the newest platform attempt failed, outbox empty',
    (s) => {
      s.outbox.pending = 0;
      s.platform = {
        lastAnswerAgeS: 400,
        failing: { message: 'token refresh: 127.0.0.1:44413 unreachable (ECONNREFUSED)', since: now - 360_000, forS: 360 },
        expectedIntervalS: 1925,
      };
    },
    1,
    /^platform not answering for 6 min \(since 11:54:00 UTC\): token refresh: 127\.0\.0\.1:44413 unreachable \(ECONNREFUSED\)$/,
  ],
  [
    'no platform answer for longer than a working link allows',
    (s) => {
      s.platform = { lastAnswerAgeS: 2400, lastAnswerAt: now - 2_400_000, expectedIntervalS: 1925 };
    },
    1,
    /^no answer from the platform for 40 min \(since 11:20:00 UTC; a working link answers at least every 32 min\)$/,
  ],
  [
    'no platform answer since a start longer ago than a working link allows',
    (s) => {
      s.daemon.uptimeS = 4000;
      s.platform = { expectedIntervalS: 1925 };
    },
    1,
    /^no answer from the platform since the agent started 67 min ago/,
  ],
  [
    'nothing due (no fix to send, no token to renew): no platform finding',
    (s) => {
      s.daemon.uptimeS = 90_000;
      s.platform = {};
    },
    0,
    undefined,
  ],
  [
    'a transient upload error while the link fails is said once, with its cause',
    (s) => {
      s.upload.lastError = { code: 'PLATFORM_UNREACHABLE', class: 'transient', message: 'x', at: now };
      s.platform = { failing: { message: 'PUT /otm/api/v5/events: 127.0.0.1:1 unreachable (ECONNREFUSED)', since: now - 5000, forS: 5 } };
    },
    1,
    /^platform not answering for 5 s/,
  ],
  [
    'a platform that answers with an error (503) answers: said with its status, not as silence',
    (s) => {
      s.upload.lastError = { code: 'PLATFORM_UNAVAILABLE', class: 'transient', message: 'x', at: now };
      s.platform = { failing: { message: 'PUT /otm/api/v5/events: HTTP 503', since: now - 5000, forS: 5, status: 503 } };
    },
    1,
    /^platform answers HTTP 503 for 5 s/,
  ],
  [
    'daemon not running',
    (s) => {
      s.daemon.running = false;
      delete s.receiver;
    },
    2,
    /daemon not running/,
  ],
];

describe('assessHealth', () => {
  it.each(cases)('%s', (_name, patch, code, reason) => {
    const h = assessHealth(liveSnapshot(now, '/tmp/x', patch));
    expect(h.exitCode).toBe(code);
    expect(h.level).toBe(code === 0 ? 'healthy' : code === 1 ? 'degraded' : 'failing');
    if (reason) expect(h.reasons.join('\n')).toMatch(reason);
    else expect(h.reasons).toEqual([]);
  });

  it('reports failing reasons before degraded ones', () => {
    const h = assessHealth(
      liveSnapshot(now, '/tmp/x', (s) => {
        if (s.receiver) {
          s.receiver.mode = 1;
          s.receiver.link = 'closed';
        }
      }),
    );
    expect(h.reasons[0]).toMatch(/link closed/);
    expect(h.reasons).toContain('no fix');
  });
});

describe('the interval a working platform link answers in', () => {
  const base = { heartbeatS: 1800, requestTimeoutMs: 30_000 };
  it('parked with a fix: the heartbeat, when it comes before the token renewal', () => {
    expect(expectedContactIntervalS({ ...base, receiverHasFix: true, tokenRenewAfterMs: 3_480_000 })).toBe(1800 + 120 + 30);
  });
  it('no fix (nothing to send): the token renewal', () => {
    expect(expectedContactIntervalS({ ...base, receiverHasFix: false, tokenRenewAfterMs: 3_480_000 })).toBe(3480 + 120 + 30);
  });
  it('a short-lived token renews before the heartbeat', () => {
    expect(expectedContactIntervalS({ ...base, receiverHasFix: true, tokenRenewAfterMs: 540_000 })).toBe(540 + 120 + 30);
  });
  it('no fix and no token: nothing is due, so no interval', () => {
    expect(expectedContactIntervalS({ ...base, receiverHasFix: false, tokenRenewAfterMs: undefined })).toBeUndefined();
  });
  it('a failing link and a transient upload error give one reason, not two', () => {
    const h = assessHealth(
      liveSnapshot(now, '/tmp/x', (s) => {
        s.upload.lastError = { code: 'PLATFORM_UNREACHABLE', class: 'transient', message: 'x', at: now };
        s.platform = { failing: { message: 'PUT /otm/api/v5/events: x unreachable (ECONNREFUSED)', since: now - 5000, forS: 5 } };
      }),
    );
    expect(h.reasons).toHaveLength(1);
  });
});
