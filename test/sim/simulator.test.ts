import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { request } from 'undici';
import { ManualClock } from '../../src/system/clock.js';
import { PlatformSimulator, type SimUrls } from '../../src/sim/index.js';

/** The simulator over real loopback HTTP, as the agent and other processes see it. */

let sim: PlatformSimulator;
let urls: SimUrls;
let clock: ManualClock;

beforeEach(async () => {
  clock = new ManualClock();
  sim = new PlatformSimulator({
    users: [
      { username: 'u', password: 'p' },
      { username: 'limited', password: 'p', carriers: ['C1'] },
    ],
    accessTtlS: 60,
    refreshTtlS: 600,
    clock,
  });
  urls = await sim.start({ port: 0 });
});
afterEach(async () => {
  await sim.stop();
});

async function form(url: string, fields: Record<string, string>) {
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
  return { status: res.statusCode, headers: res.headers, body: (await res.body.json()) as Record<string, unknown> };
}

async function call(
  method: 'GET' | 'PUT' | 'POST' | 'DELETE',
  url: string,
  token: string | undefined,
  body?: unknown,
  extraHeaders: Record<string, string> = {},
) {
  const res = await request(url, {
    method,
    headers: {
      ...extraHeaders,
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  const text = await res.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers, json: json as any, text };
}

async function login(username = 'u') {
  const r = await form(`${urls.authUrl}/auth/password`, { username, password: 'p' });
  expect(r.status).toBe(200);
  return r.body as { access_token: string; refresh_token: string; expires_in: number; token_type: string; id_token: string };
}

const event = (id: string) => ({
  eventType: 'locationUpdateEvent',
  id,
  creationDate: '2026-11-22T08:00:00Z',
  lifecycle: 'actual',
  geoReference: { type: 'latLonPointGeoReference', lat: 52.1, lon: 5.4 },
});

describe('platform simulator: token service (spec 4.1, 2.1, 2.2)', () => {
  it('issues a JWT-shaped pair for valid credentials and 401 invalid_grant otherwise', async () => {
    const pair = await login();
    expect(pair.token_type).toBe('bearer');
    expect(pair.expires_in).toBe(60);
    for (const t of [pair.access_token, pair.refresh_token, pair.id_token]) expect(t.split('.')).toHaveLength(3);
    // The real platform's size and shape (docs/platform-contract.md, Tokens): an RS256 Keycloak JWT of
    // about 1,300 characters with kid in its header, a 256-byte signature and Keycloak's claims.
    expect(pair.access_token.length).toBeGreaterThan(1200);
    expect(pair.access_token.length).toBeLessThan(1400);
    const [head, body, sig] = pair.access_token.split('.') as [string, string, string];
    expect(JSON.parse(Buffer.from(head, 'base64url').toString())).toMatchObject({ alg: 'RS256', typ: 'JWT', kid: expect.any(String) });
    expect(Buffer.from(sig, 'base64url')).toHaveLength(256);
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString()) as Record<string, unknown>;
    for (const c of ['jti', 'exp', 'nbf', 'iat', 'iss', 'aud', 'sub', 'typ', 'azp', 'auth_time', 'session_state', 'acr'])
      expect(claims).toHaveProperty(c);
    for (const c of ['allowed-origins', 'resource_access', 'scope', 'name', 'preferred_username', 'given_name', 'family_name', 'email'])
      expect(claims).toHaveProperty(c);
    expect(claims).toMatchObject({ typ: 'Bearer', preferred_username: 'u', exp: (claims.iat as number) + 60 });
    expect(pair.refresh_token.length).toBeGreaterThan(600);
    expect(pair.id_token.length).toBeGreaterThan(900);
    const bad = await form(`${urls.authUrl}/auth/password`, { username: 'u', password: 'wrong' });
    expect(bad.status).toBe(401);
    expect(bad.body).toMatchObject({ error: 'invalid_grant' });
    expect(bad.body.error_description).toMatch(/credentials/i);
    expect(sim.stats).toMatchObject({ passwordGrants: 1, passwordRejected: 1 });
  });

  it('rotates the refresh token: the old one is a counted reuse, the new one works', async () => {
    const first = await login();
    const second = await form(`${urls.authUrl}/auth/refresh`, { refresh_token: first.refresh_token });
    expect(second.status).toBe(200);
    expect(second.body.refresh_token).not.toBe(first.refresh_token);
    // Three tokens down on a refresh too, as Keycloak answers a session opened with scope openid.
    expect(String(second.body.id_token).split('.')).toHaveLength(3);
    const reuse = await form(`${urls.authUrl}/auth/refresh`, { refresh_token: first.refresh_token });
    expect(reuse.status).toBe(401);
    expect(reuse.body.error).toBe('invalid_grant');
    const third = await form(`${urls.authUrl}/auth/refresh`, { refresh_token: String(second.body.refresh_token) });
    expect(third.status).toBe(200);
    expect(sim.stats).toMatchObject({ refreshes: 2, refreshReuses: 1 });
  });

  it('expires access tokens after expires_in and refresh tokens after their lifetime (monotonic clock)', async () => {
    const pair = await login();
    expect((await call('GET', urls.deviceUrl, pair.access_token)).status).toBe(200);
    clock.advance(60_000);
    const expired = await call('GET', urls.deviceUrl, pair.access_token);
    expect(expired.status).toBe(401);
    clock.advance(600_000);
    const refresh = await form(`${urls.authUrl}/auth/refresh`, { refresh_token: pair.refresh_token });
    expect(refresh.status).toBe(401);
    expect(sim.stats).toMatchObject({ refreshExpired: 1, unauthorized: 1 });
  });

  it('expires a configured fraction of access tokens early, reproducibly', async () => {
    const early = new PlatformSimulator({ users: [{ username: 'u', password: 'p' }], accessTtlS: 100, earlyExpiryFraction: 1, clock });
    const u = await early.start();
    try {
      const r = await form(`${u.authUrl}/auth/password`, { username: 'u', password: 'p' });
      clock.advance(50_000); // every early token dies by 50% of its lifetime
      expect((await call('GET', u.deviceUrl, String(r.body.access_token))).status).toBe(401);
      expect(early.stats.earlyExpiries).toBe(1);
    } finally {
      await early.stop();
    }
  });
});

describe('platform simulator: tracking device service (spec 4.2)', () => {
  const device = {
    externalSystemId: 'sys',
    externalDeviceId: 'dev-1',
    active: true,
    carrierCode: 'C1',
    customerDeviceId: 'dev-1',
    licensePlate: 'AB-12-CD',
  };

  it('upserts by (externalSystemId, externalDeviceId) with a stable deviceUUID and retrieves it', async () => {
    const { access_token: t } = await login();
    const created = await call('PUT', urls.deviceUrl, t, device);
    expect(created.status).toBe(200);
    expect(created.json.deviceUUID).toMatch(/^[0-9a-f-]{36}$/);
    clock.advance(1000);
    const updated = await call('POST', urls.deviceUrl, t, { ...device, driverName: 'Jan' });
    expect(updated.json.deviceUUID).toBe(created.json.deviceUUID);
    expect(updated.json.driverName).toBe('Jan');
    expect(updated.json.creationDate).toBe(created.json.creationDate);
    expect(updated.json.lastUpdatedDate).not.toBe(created.json.lastUpdatedDate);
    const list = await call('GET', urls.deviceUrl, t);
    expect(list.json).toHaveLength(1);
    const byId = await call('GET', `${urls.deviceUrl}external-system/sys/external-device/dev-1`, t);
    expect(byId.json.deviceUUID).toBe(created.json.deviceUUID);
    const byPlate = await call('GET', `${urls.deviceUrl}external-system/sys/license-plate/AB-12-CD`, t);
    expect(byPlate.json.deviceUUID).toBe(created.json.deviceUUID);
    expect((await call('GET', `${urls.deviceUrl}external-system/sys/external-device/nope`, t)).status).toBe(404);
    expect(sim.stats).toMatchObject({ devicesCreated: 1, devicesUpdated: 1 });
  });

  it('answers 400 naming each missing or mistyped field, 403 for a carrier the account may not use, 401 without a bearer', async () => {
    const { access_token: t } = await login();
    const bad = await call('PUT', urls.deviceUrl, t, { externalSystemId: 'sys', active: 'yes', carrierCode: 7 });
    expect(bad.status).toBe(400);
    const fields = (bad.json.errors as { field: string }[]).map((e) => e.field).sort();
    expect(fields).toEqual(['active', 'carrierCode', 'customerDeviceId', 'externalDeviceId']);
    expect(bad.json.message).toMatch(/active: must be a boolean/);
    const limited = await login('limited');
    const forbidden = await call('PUT', urls.deviceUrl, limited.access_token, { ...device, carrierCode: 'OTHER' });
    expect(forbidden.status).toBe(403);
    expect(forbidden.json.message).toMatch(/OTHER/);
    expect((await call('PUT', urls.deviceUrl, undefined, device)).status).toBe(401);
  });
});

describe('platform simulator: planning host (events, locations)', () => {
  it('records events, de-duplicates by id and counts duplicates', async () => {
    const { access_token: t } = await login();
    for (const id of ['e1', 'e2', 'e1'])
      expect((await call('PUT', `${urls.planningUrl}/otm/api/v5/events`, t, event(id))).status).toBe(200);
    expect([...sim.events.keys()]).toEqual(['e1', 'e2']);
    expect(sim.events.get('e1')?.deliveries).toBe(2);
    expect(sim.stats.duplicates).toBe(1);
  });

  it('echoes the event in a 200 even when asked for Prefer: return=minimal (the platform may ignore it)', async () => {
    const { access_token: t } = await login();
    const url = `${urls.planningUrl}/otm/api/v5/events`;
    const r = await call('PUT', url, t, event('asked'), { prefer: 'return=minimal' });
    expect(r.status).toBe(200);
    expect(r.json).toEqual(event('asked'));
    expect(r.headers['preference-applied']).toBeUndefined();
    expect(sim.events.get('asked')?.preferMinimal).toBe(true);
  });

  it('honours Prefer: return=minimal (RFC 7240) when told to: 204, no body, Preference-Applied; echoes the event without it', async () => {
    const minimalSim = new PlatformSimulator({ users: [{ username: 'u', password: 'p' }], honourPreferMinimal: true, clock });
    const u = await minimalSim.start({ port: 0 });
    onTestFinished(() => minimalSim.stop());
    const pair = await form(`${u.authUrl}/auth/password`, { username: 'u', password: 'p' });
    const t = String(pair.body.access_token);
    const url = `${u.planningUrl}/otm/api/v5/events`;
    for (const prefer of ['return=minimal', 'respond-async, RETURN = "minimal"; x=1']) {
      const id = `m-${prefer.length}`;
      for (let i = 0; i < 2; i++) {
        // The first time new, the second a duplicate: both answered minimally.
        const r = await call('PUT', url, t, event(id), { prefer });
        expect(r.status).toBe(204);
        expect(r.text).toBe('');
        expect(r.headers['preference-applied']).toBe('return=minimal');
      }
      expect(minimalSim.events.get(id)).toMatchObject({ deliveries: 2, preferMinimal: true });
    }
    const full = await call('PUT', url, t, event('echo'), { prefer: 'return=representation' });
    expect(full.status).toBe(200);
    expect(full.json).toEqual(event('echo'));
    expect(full.headers['preference-applied']).toBeUndefined();
    const none = await call('PUT', url, t, event('plain'));
    expect(none.status).toBe(200);
    expect(none.json).toEqual(event('plain'));
    expect(minimalSim.events.get('plain')?.preferMinimal).toBe(false);
    // Errors stay in full: the client needs them to classify the refusal.
    const bad = await call('PUT', url, t, { id: 'bad' }, { prefer: 'return=minimal' });
    expect(bad.status).toBe(400);
    expect(bad.json[0]).toMatchObject({ type: 'missingField' });
  });

  it('answers 400 with the OTM5 error array for invalid events and bodies that are not JSON', async () => {
    const { access_token: t } = await login();
    const r = await call('PUT', `${urls.planningUrl}/otm/api/v5/events`, t, {
      id: 'x',
      geoReference: { type: 'latLonPointGeoReference', lat: 95 },
    });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      expect.arrayContaining([
        { type: 'missingField', field: 'eventType', message: expect.any(String) },
        { type: 'invalidField', field: 'geoReference.lat', message: expect.stringMatching(/between/) },
        { type: 'missingField', field: 'geoReference.lon', message: expect.any(String) },
      ]),
    );
    const notJson = await call('PUT', `${urls.planningUrl}/otm/api/v5/events`, t, '{nope');
    expect(notJson.json[0]).toMatchObject({ type: 'invalidJson' });
    expect(sim.events.size).toBe(0);
    expect(sim.stats.invalidEvents).toBe(2);
    expect((await call('PUT', `${urls.planningUrl}/otm/api/v5/events`, undefined, event('y'))).status).toBe(401);
  });

  it('upserts locations by id and gives an address-only location a deterministic stand-in coordinate', async () => {
    const { access_token: t } = await login();
    const address = { type: 'addressGeoReference', street: 'Stationsplein', houseNumber: '1', postalCode: '3511 ED', city: 'Utrecht' };
    const put = (id: string) => call('PUT', `${urls.planningUrl}/otm/api/v5/locations`, t, { id, type: 'customer', geoReference: address });
    expect((await put('L1')).status).toBe(200);
    expect((await put('L1')).status).toBe(200);
    expect((await put('L2')).status).toBe(200);
    const l1 = sim.locations.get('L1');
    expect(l1?.version).toBe(2);
    expect(l1?.coordinate.source).toBe('inferred');
    expect(sim.locations.get('L2')?.coordinate).toEqual(l1?.coordinate);
    expect(l1?.coordinate.lat).toBeGreaterThan(50);
    const bad = await call('PUT', `${urls.planningUrl}/otm/api/v5/locations`, t, { type: 'customer', geoReference: { type: 'polygon' } });
    expect(bad.status).toBe(400);
    expect(bad.json.map((e: { field: string }) => e.field).sort()).toEqual(['geoReference.type', 'id']);
  });
});

describe('platform simulator: faults and the admin API', () => {
  it('injects 500/503/429/401 and drops per route, with a limit, counted per route', async () => {
    const { access_token: t } = await login();
    const path = `${urls.planningUrl}/otm/api/v5/events`;
    sim.faults.set('events', { status500Rate: 1, limit: 1 });
    expect((await call('PUT', path, t, event('a'))).status).toBe(500);
    expect((await call('PUT', path, t, event('a'))).status).toBe(200);
    sim.faults.set('events', { status503Rate: 1, limit: 1 });
    const html = await call('PUT', path, t, event('b'));
    expect(html.status).toBe(503);
    expect(html.headers['content-type']).toMatch(/html/);
    sim.faults.set('events', { status429: { rate: 1, retryAfterS: 7 }, limit: 1 });
    const limited = await call('PUT', path, t, event('b'));
    expect([limited.status, limited.headers['retry-after']]).toEqual([429, '7']);
    sim.faults.set('events', { unauthorizedRate: 1, limit: 1 });
    expect((await call('PUT', path, t, event('b'))).status).toBe(401);
    sim.faults.set('events', { dropRate: 1, limit: 1 });
    await expect(call('PUT', path, t, event('b'))).rejects.toThrow();
    expect((await call('PUT', path, t, event('b'))).status).toBe(200);
    const s = sim.stats;
    expect(s.faults.events).toBe(5);
    expect(s.requests.events).toBe(7);
    expect([...sim.events.keys()]).toEqual(['a', 'b']);
  });

  it('is observable and faultable over HTTP from another process', async () => {
    const set = await call('POST', `${urls.adminUrl}/faults`, undefined, { 'auth.password': { status503Rate: 1 } });
    expect(set.status).toBe(200);
    expect(set.json['auth.password']).toEqual({ status503Rate: 1 });
    const r = await form(`${urls.authUrl}/auth/password`, { username: 'u', password: 'p' }).catch(() => undefined);
    expect(r).toBeUndefined(); // an HTML body: not JSON
    const stats = await call('GET', `${urls.adminUrl}/stats`, undefined);
    expect(stats.json.requests['auth.password']).toBe(1);
    expect(stats.json.faults['auth.password']).toBe(1);
    expect((await call('POST', `${urls.adminUrl}/faults`, undefined, { nope: {} })).status).toBe(400);
    expect((await call('POST', `${urls.adminUrl}/faults`, undefined, { events: { status500Rate: 2 } })).status).toBe(400);
    await call('DELETE', `${urls.adminUrl}/faults`, undefined);
    await login();
    const { access_token: t } = await login();
    await call('PUT', `${urls.planningUrl}/otm/api/v5/events`, t, event('z'));
    await call('PUT', `${urls.planningUrl}/otm/api/v5/events`, t, { ...event('stop'), eventType: 'stopMovingEvent' });
    await call('PUT', `${urls.planningUrl}/otm/api/v5/events`, t, event('y'));
    const ids = async (route: string): Promise<unknown> =>
      ((await call('GET', `${urls.adminUrl}/${route}`, undefined)).json as Array<{ id: string; event: { eventType: string } }>).map(
        (e) => `${e.id} ${e.event.eventType}`,
      );
    // Location updates alone where scripts count them; the trips and engine events on their own route, or all together.
    expect(await ids('events')).toEqual(['z locationUpdateEvent', 'y locationUpdateEvent']);
    expect(await ids('vehicle-events')).toEqual(['stop stopMovingEvent']);
    expect(await ids('events?type=vehicle')).toEqual(['stop stopMovingEvent']);
    const all = (await ids('events?type=all')) as string[];
    expect([...all].sort()).toEqual(['stop stopMovingEvent', 'y locationUpdateEvent', 'z locationUpdateEvent']);
    expect(all.indexOf('z locationUpdateEvent')).toBeLessThan(all.indexOf('y locationUpdateEvent'));
    const wrong = await call('GET', `${urls.adminUrl}/events?type=trips`, undefined);
    expect([wrong.status, wrong.json.message]).toEqual([400, 'unknown type "trips"; types: location (the default), vehicle, all']);
    await call('POST', `${urls.adminUrl}/tokens/expire`, undefined, { access: true });
    expect((await call('GET', urls.deviceUrl, t)).status).toBe(401);
  });

  it('binds 127.0.0.1 only', () => {
    expect(new URL(urls.authUrl).hostname).toBe('127.0.0.1');
  });
});
