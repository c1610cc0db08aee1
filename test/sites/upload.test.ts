import { describe, expect, it } from 'vitest';
import { decideRetry, DEFAULT_LOCATION_RETRY, type RetryFacts } from '../../src/sites/retry.js';
import { problemsFromBody, formatProblem } from '../../src/sites/platform-answer.js';
import { sendLocations, summaryLine } from '../../src/sites/send.js';
import { LocationUploader, type RetryNotice } from '../../src/sites/upload.js';
import type { OtmLocation } from '../../src/sites/site-types.js';
import { validateLocation } from '../../src/sites/validate.js';
import { startPlatform, type Platform } from '../platform/fixture.js';
import { CUSTOMER } from './sites.js';

const ID = '3f0c2a9e-5b1d-4c7e-9a2f-6d8b1e4c7a90';

function location(input: Record<string, unknown>): OtmLocation {
  const r = validateLocation(input);
  if (!r.location) throw new Error(r.errors.map((e) => `${e.path}: ${e.message}`).join('; '));
  return r.location;
}

const DEPOT = location({
  id: ID,
  name: 'Depot Amersfoort',
  type: 'warehouse',
  geoReference: { type: 'latLonPointGeoReference', lat: 52.1956251, lon: 5.4126792 },
  administrativeReference: {
    name: 'Depot Amersfoort',
    street: 'Valutaboulevard',
    houseNumber: '16',
    postalCode: '1825BT',
    city: 'Amersfoort',
    country: 'NL',
  },
  contactDetails: [{ type: 'phone', value: '+31 33 123 4567' }],
});

/** The uploader as the CLI builds it, with the sleeps recorded instead of waited. */
function uploader(p: Platform, over: { url?: string } = {}) {
  const { client } = p.agent();
  const sleeps: number[] = [];
  const notices: RetryNotice[] = [];
  const up = new LocationUploader({
    requester: client,
    url: over.url ?? `${p.urls.planningUrl}/otm/api/v5/locations`,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 0.5,
    onRetry: (n) => notices.push(n),
  });
  return { up, sleeps, notices };
}

describe('location upload against the platform simulator', () => {
  it('creates a location, then updates the same id in place', async () => {
    const p = await startPlatform();
    const { up } = uploader(p);
    const created = await up.put(DEPOT);
    expect(created).toMatchObject({ kind: 'stored', status: 200, attempts: 1 });
    expect(created.kind === 'stored' && created.body).toEqual(DEPOT);
    expect(p.sim.locations.get(ID)).toMatchObject({ version: 1, coordinate: { lat: 52.1956251, lon: 5.4126792, source: 'given' } });

    const renamed = { ...DEPOT, name: 'Depot Amersfoort-Noord' };
    const updated = await up.put(renamed);
    expect(updated.kind).toBe('stored');
    expect(p.sim.locations.size).toBe(1);
    expect(p.sim.locations.get(ID)).toMatchObject({ version: 2, location: { name: 'Depot Amersfoort-Noord' } });
  });

  it('uploads an address-only location, which the platform geocodes', async () => {
    const p = await startPlatform();
    const { up } = uploader(p);
    const customer = location(CUSTOMER);
    const r = await up.put(customer);
    expect(r.kind).toBe('stored');
    const stored = p.sim.locations.get(customer.id);
    expect(stored?.coordinate.source).toBe('inferred');
    expect(stored?.location).toEqual(customer);
  });

  it('a 400 is reported with the platform error list and not retried', async () => {
    const p = await startPlatform();
    const { up, sleeps } = uploader(p);
    // What the local validator would never let through, to see the platform's own refusal.
    const bad = { ...DEPOT, geoReference: { type: 'latLonPointGeoReference', lat: '52.19', lon: 5.41 } } as unknown as OtmLocation;
    const r = await up.put(bad);
    expect(r.kind).toBe('rejected');
    if (r.kind !== 'rejected') return;
    expect(r.status).toBe(400);
    expect(r.attempts).toBe(1);
    expect(r.problems.map(formatProblem)).toEqual(['geoReference.lat (invalidField): geoReference.lat must be a number']);
    expect(sleeps).toEqual([]);
    expect(p.sim.stats.invalidLocations).toBe(1);
    expect(p.sim.locations.size).toBe(0);
  });

  it('a 401 goes through the token manager: one refresh, one retry, no second password grant', async () => {
    const p = await startPlatform();
    const { up } = uploader(p);
    expect((await up.put(DEPOT)).kind).toBe('stored');
    p.sim.expireAccessTokens();
    const r = await up.put({ ...DEPOT, name: 'after expiry' });
    expect(r).toMatchObject({ kind: 'stored', attempts: 1 });
    expect(p.sim.stats).toMatchObject({ passwordGrants: 1, refreshes: 1, unauthorized: 1, refreshReuses: 0 });
    expect(p.sim.locations.get(ID)?.location.name).toBe('after expiry');
  });

  it('retries 5xx with backoff and succeeds when the platform recovers', async () => {
    const p = await startPlatform();
    const { up, sleeps, notices } = uploader(p);
    p.sim.setFaults('locations', { status500Rate: 1, limit: 2 });
    const r = await up.put(DEPOT);
    expect(r).toMatchObject({ kind: 'stored', attempts: 3 });
    // Equal jitter with random 0.5: 3/4 of 1 s, then of 2 s.
    expect(sleeps).toEqual([750, 1500]);
    expect(notices.map((n) => n.cause)).toEqual(['HTTP 500', 'HTTP 500']);
    expect(p.sim.stats.requests.locations).toBe(3);
    expect(p.sim.locations.get(ID)?.version).toBe(1);
  });

  it('retries a dropped connection, and honours Retry-After on 429', async () => {
    const p = await startPlatform();
    const { up, sleeps, notices } = uploader(p);
    p.sim.setFaults('locations', { dropRate: 1, limit: 1 });
    expect(await up.put(DEPOT)).toMatchObject({ kind: 'stored', attempts: 2 });
    expect(notices[0]?.cause).toMatch(/^PLATFORM_/);
    p.sim.setFaults('locations', { status429: { rate: 1, retryAfterS: 3 }, limit: 1 });
    expect(await up.put(DEPOT)).toMatchObject({ kind: 'stored', attempts: 2 });
    expect(sleeps).toEqual([750, 3750]); // Retry-After 3 s, spread above it (random 0.5: x 1.25)
  });

  it('gives up after the last attempt with a clear, transient failure', async () => {
    const p = await startPlatform();
    const { up, sleeps } = uploader(p);
    p.sim.setFaults('locations', { status503Rate: 1 });
    const r = await up.put(DEPOT);
    expect(r.kind).toBe('failed');
    if (r.kind !== 'failed') return;
    expect(r.attempts).toBe(DEFAULT_LOCATION_RETRY.maxAttempts);
    expect(sleeps).toHaveLength(DEFAULT_LOCATION_RETRY.maxAttempts - 1);
    expect(r.error.code).toBe('LOCATION_UPLOAD_UNAVAILABLE');
    expect(r.error.errorClass).toBe('transient');
    expect(r.error.message).toBe(
      'location upload failed: the platform answered HTTP 503; gave up after 4 attempts. Nothing was changed locally; run the command again later',
    );
    expect(p.sim.stats.requests.locations).toBe(4);
    expect(p.sim.locations.size).toBe(0);
  });

  it('a wrong locations path is a configuration failure, not retried', async () => {
    const p = await startPlatform();
    const { up, sleeps } = uploader(p, { url: `${p.urls.planningUrl}/otm/api/v5/location` });
    const r = await up.put(DEPOT);
    expect(r.kind).toBe('failed');
    if (r.kind !== 'failed') return;
    expect(r.error.code).toBe('LOCATION_UPLOAD_NOT_FOUND');
    expect(r.error.errorClass).toBe('config');
    expect(r.error.message).toContain('check platform.planningUrl and platform.locationsPath');
    expect(sleeps).toEqual([]);
  });
});

describe('sending a batch', () => {
  it('a location the platform refuses does not stop the others; the answers are printed readably', async () => {
    const p = await startPlatform();
    const { up } = uploader(p);
    const other = location({
      name: 'Yard',
      type: 'operationalBase',
      geoReference: { type: 'latLonPointGeoReference', lat: 51.37, lon: 6.17 },
    });
    const refused = { ...other, id: '', name: 'no id' } as OtmLocation;
    const lines: string[] = [];
    const report = await sendLocations([DEPOT, refused, other], up, { info: (l) => lines.push(l) });
    expect(report).toMatchObject({ rejected: 1, notSent: 0 });
    expect(report.failure).toBeUndefined();
    expect(report.stored).toEqual([DEPOT, other]);
    expect(lines).toEqual([
      `stored [0] ${ID} (Depot Amersfoort): HTTP 200`,
      'rejected [1]  (no id): the platform answered HTTP 400:\n  - id (invalidField): id must be a non-empty string',
      `stored [2] ${other.id} (Yard): HTTP 200`,
    ]);
    expect(summaryLine(3, report)).toBe('summary: 2 of 3 stored, 1 rejected by the platform, 0 failed, 0 not sent');
  });

  it('a failure that would hit every location stops the batch', async () => {
    const p = await startPlatform();
    const { up } = uploader(p, { url: `${p.urls.planningUrl}/otm/api/v5/nowhere` });
    const lines: string[] = [];
    const report = await sendLocations([DEPOT, DEPOT, DEPOT], up, { info: (l) => lines.push(l) });
    expect(report.failure?.code).toBe('LOCATION_UPLOAD_NOT_FOUND');
    expect(report.notSent).toBe(2);
    expect(lines).toHaveLength(1);
    expect(p.sim.stats.requests.locations).toBe(0);
  });
});

describe('answers the simulator does not give', () => {
  /** A requester answering from a list, for statuses and headers a real server would send. */
  function answering(...answers: { status: number; headers?: Record<string, string>; body?: unknown }[]) {
    const sleeps: number[] = [];
    const up = new LocationUploader({
      requester: {
        send: async () => {
          const a = answers.shift()!;
          return { status: a.status, headers: a.headers ?? {}, body: a.body, text: a.body === undefined ? '' : JSON.stringify(a.body) };
        },
      },
      url: 'https://planning.example/otm/api/v5/locations',
      sleep: async (ms) => {
        sleeps.push(ms);
      },
      random: () => 0.5,
      clock: { wallMs: () => Date.UTC(2026, 10, 22, 8, 0, 0) },
    });
    return { up, sleeps };
  }

  it('honours a Retry-After given as an HTTP-date (against the injected wall clock)', async () => {
    const { up, sleeps } = answering(
      { status: 503, headers: { 'retry-after': 'Sun, 22 Nov 2026 08:00:09 GMT' } },
      { status: 200, body: DEPOT },
    );
    expect(await up.put(DEPOT)).toMatchObject({ kind: 'stored', attempts: 2 });
    expect(sleeps).toEqual([11_250]); // 9 s, spread above it (random 0.5: x 1.25)
  });

  it('a proxy asking for credentials (407) is a configuration failure naming the proxy, not retried', async () => {
    const { up, sleeps } = answering({ status: 407 });
    const r = await up.put(DEPOT);
    expect(r).toMatchObject({ kind: 'failed', attempts: 1 });
    if (r.kind !== 'failed') return;
    expect(r.error).toMatchObject({ code: 'LOCATION_UPLOAD_MISCONFIGURED', errorClass: 'config', status: 407 });
    expect(r.error.message).toMatch(/proxy/);
    expect(sleeps).toEqual([]);
  });
});

describe('the retry decision', () => {
  const policy = DEFAULT_LOCATION_RETRY;
  const table: [string, RetryFacts, ReturnType<typeof decideRetry>][] = [
    ['200', { status: 200, attempt: 1 }, { action: 'done' }],
    ['204', { status: 204, attempt: 1 }, { action: 'done' }],
    ['400 is the data', { status: 400, attempt: 1 }, { action: 'stop' }],
    ['401 after the requester refreshed', { status: 401, attempt: 1 }, { action: 'stop' }],
    ['403', { status: 403, attempt: 1 }, { action: 'stop' }],
    ['404', { status: 404, attempt: 1 }, { action: 'stop' }],
    ['405', { status: 405, attempt: 1 }, { action: 'stop' }],
    ['407 proxy', { status: 407, attempt: 1 }, { action: 'stop' }],
    ['425 too early is transient (status table)', { status: 425, attempt: 1 }, { action: 'retry', delayMs: 750 }],
    ['408 first attempt', { status: 408, attempt: 1 }, { action: 'retry', delayMs: 750 }],
    ['500 first attempt', { status: 500, attempt: 1 }, { action: 'retry', delayMs: 750 }],
    ['502 second attempt', { status: 502, attempt: 2 }, { action: 'retry', delayMs: 1500 }],
    ['503 third attempt', { status: 503, attempt: 3 }, { action: 'retry', delayMs: 3000 }],
    ['503 last attempt', { status: 503, attempt: 4 }, { action: 'give-up', reason: 'gave up after 4 attempts' }],
    ['429 with a short Retry-After, spread above it', { status: 429, attempt: 1, retryAfterMs: 5000 }, { action: 'retry', delayMs: 6250 }],
    [
      '429 with a Retry-After longer than a person waits',
      { status: 429, attempt: 1, retryAfterMs: 600_000 },
      { action: 'give-up', reason: 'the platform asks to wait 600 s before trying again' },
    ],
    ['network error, retryable', { retryable: true, attempt: 1 }, { action: 'retry', delayMs: 750 }],
    ['network error, last attempt', { retryable: true, attempt: 4 }, { action: 'give-up', reason: 'gave up after 4 attempts' }],
    ['no token can be had (credentials rejected)', { retryable: false, attempt: 1 }, { action: 'stop' }],
  ];
  it.each(table)('%s', (_name, facts, expected) => {
    expect(decideRetry(facts, policy, () => 0.5)).toEqual(expected);
  });

  it('backoff is capped at maxBackoffMs', () => {
    expect(decideRetry({ status: 500, attempt: 9 }, { maxAttempts: 20, minBackoffMs: 1000, maxBackoffMs: 15_000 }, () => 1)).toEqual({
      action: 'retry',
      delayMs: 15_000,
    });
  });
});

describe('reading the platform answer', () => {
  it.each([
    [
      'the OTM5 error array',
      [
        { type: 'missingField', field: 'id', message: 'id is required' },
        { type: 'invalidField', field: 'geoReference.lat', message: 'must be a number' },
      ],
      '',
      ['id (missingField): id is required', 'geoReference.lat (invalidField): must be a number'],
    ],
    ['an object with errors', { errors: [{ message: 'bad type', path: 'type' }] }, '', ['type: bad type']],
    ['a Spring-style error object', { status: 400, error: 'Bad Request', message: 'JSON parse error' }, '', ['JSON parse error']],
    ['a plain string body', 'Internal Server Error', '', ['Internal Server Error']],
    ['HTML text only', undefined, '<html><body>Bad  request</body></html>', ['<html><body>Bad request</body></html>']],
    ['nothing', undefined, '', []],
  ])('%s', (_name, body, text, expected) => {
    expect(problemsFromBody(body, text).map(formatProblem)).toEqual(expected);
  });
});
