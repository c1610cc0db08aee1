import type { RouteName } from './faults.js';

/** Where a request goes: the route name (fault and statistics key) and the handler's parameters. */
export type Match =
  | { route: 'auth.password' | 'auth.refresh'; op: 'token' }
  | { route: 'devices'; op: 'upsert' | 'list' }
  | { route: 'devices'; op: 'byExternalId'; externalSystemId: string; externalDeviceId: string }
  | { route: 'devices'; op: 'byLicensePlate'; externalSystemId: string; licensePlate: string }
  | { route: 'events' | 'locations'; op: 'put' };

export type MatchResult = { ok: true; match: Match } | { ok: false; status: 404 | 405; allow?: string };

export const AUTH_BASE = '/api/v1';
export const DEVICE_BASE = '/api/public/v2/';
export const EVENTS_PATH = '/otm/api/v5/events';
export const LOCATIONS_PATH = '/otm/api/v5/locations';

const BY_ID = /^\/api\/public\/v2\/external-system\/([^/]+)\/external-device\/([^/]+)$/;
const BY_PLATE = /^\/api\/public\/v2\/external-system\/([^/]+)\/license-plate\/([^/]+)$/;

function only(method: string, allowed: string[], match: Match): MatchResult {
  return allowed.includes(method) ? { ok: true, match } : { ok: false, status: 405, allow: allowed.join(', ') };
}

/** Routes of the token, device and location services and the event intake (docs/platform-contract.md). */
export function matchRoute(method: string, pathname: string): MatchResult {
  if (pathname === `${AUTH_BASE}/auth/password`) return only(method, ['POST'], { route: 'auth.password', op: 'token' });
  if (pathname === `${AUTH_BASE}/auth/refresh`) return only(method, ['POST'], { route: 'auth.refresh', op: 'token' });
  if (pathname === DEVICE_BASE || pathname === DEVICE_BASE.slice(0, -1)) {
    if (method === 'GET') return { ok: true, match: { route: 'devices', op: 'list' } };
    return only(method, ['POST', 'PUT'], { route: 'devices', op: 'upsert' });
  }
  const byId = BY_ID.exec(pathname);
  if (byId)
    return only(method, ['GET'], {
      route: 'devices',
      op: 'byExternalId',
      externalSystemId: decodeURIComponent(byId[1] ?? ''),
      externalDeviceId: decodeURIComponent(byId[2] ?? ''),
    });
  const byPlate = BY_PLATE.exec(pathname);
  if (byPlate)
    return only(method, ['GET'], {
      route: 'devices',
      op: 'byLicensePlate',
      externalSystemId: decodeURIComponent(byPlate[1] ?? ''),
      licensePlate: decodeURIComponent(byPlate[2] ?? ''),
    });
  if (pathname === EVENTS_PATH) return only(method, ['PUT'], { route: 'events', op: 'put' });
  if (pathname === LOCATIONS_PATH) return only(method, ['PUT'], { route: 'locations', op: 'put' });
  return { ok: false, status: 404 };
}

export function isServiceRoute(route: RouteName): boolean {
  return route !== 'auth.password' && route !== 'auth.refresh';
}
