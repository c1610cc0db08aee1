import { isRouteName, ROUTES, type FaultSpec, type RouteName } from './faults.js';
import type { CapacitySpec } from './capacity.js';
import { isPlainObject, json, parseJson, type Reply } from './http-io.js';
import type { SimDevice } from './devices.js';
import type { Faults } from './faults.js';
import type { ReceivedEvent, StoredLocation } from './planning.js';
import type { SimStats } from './stats.js';
import type { SimUser, TokenAnswerFault } from './tokens.js';

/**
 * The simulator's own HTTP API, so that another process (the daemon in end-to-end tests, the demo)
 * can be observed and faulted. Loopback only, like the rest of the simulator; no authentication.
 *
 *   GET    /_sim/stats            counters (SimStats)
 *   GET    /_sim/events           received location updates, in order of first arrival (?type=all: with the vehicle events)
 *   GET    /_sim/vehicle-events   received movement and engine events (startMovingEvent, stopEngineEvent, ...)
 *   GET    /_sim/locations        stored locations
 *   GET    /_sim/devices          registered devices
 *   GET    /_sim/faults           active faults per route
 *   POST   /_sim/faults           {"events": {"status500Rate": 0.5}, "auth.refresh": null}  (null clears)
 *   DELETE /_sim/faults           clears every fault
 *   POST   /_sim/capacity         {"events": {"ratePerS": 50, "queueBound": 100, "rejectStatus": 429, "retryAfterS": 2}, "devices": null}
 *   POST   /_sim/tokens/expire    {"access": true, "refresh": true}
 *   POST   /_sim/tokens/answer    {"expiresIn": 0.001} | {"expiresInLiteral": "1e999"} | {"accessTokenSuffix": "\n"}, "limit"?: n ({} clears)
 *   POST   /_sim/users            {"username": "...", "password": "...", "carriers": ["..."]}
 */
/** What the admin API reads and changes: the part of PlatformSimulator it needs (server.ts passes itself). */
export interface AdminTarget {
  readonly stats: SimStats;
  readonly events: ReadonlyMap<string, ReceivedEvent>;
  readonly locations: ReadonlyMap<string, StoredLocation>;
  readonly vehicleEvents: ReadonlyMap<string, ReceivedEvent>;
  readonly devices: SimDevice[];
  readonly faults: Faults;
  readonly tokenAnswerFault: TokenAnswerFault | undefined;
  expireAccessTokens(): void;
  expireRefreshTokens(): void;
  setTokenAnswerFault(fault: TokenAnswerFault | undefined): void;
  setUser(user: SimUser): void;
  setCapacity(route: RouteName, spec: CapacitySpec | undefined): void;
}

export function handleAdmin(sim: AdminTarget, method: string, pathname: string, body: string, query?: URLSearchParams): Reply {
  const path = pathname.replace(/\/+$/, '');
  const key = `${method} ${path}`;
  switch (key) {
    case 'GET /_sim/stats':
      return json(200, sim.stats);
    case 'GET /_sim/events':
      return receivedEvents(sim, query?.get('type') ?? undefined);
    case 'GET /_sim/vehicle-events':
      return json(200, [...sim.vehicleEvents.values()]);
    case 'GET /_sim/locations':
      return json(200, [...sim.locations.values()]);
    case 'GET /_sim/devices':
      return json(200, sim.devices);
    case 'GET /_sim/faults':
      return json(200, Object.fromEntries(ROUTES.map((r) => [r, sim.faults.get(r) ?? null])));
    case 'DELETE /_sim/faults':
      sim.faults.clear();
      return json(200, { cleared: true });
    case 'POST /_sim/faults':
      return setFaults(sim, body);
    case 'POST /_sim/capacity':
      return setCapacity(sim, body);
    case 'POST /_sim/tokens/expire': {
      const parsed = parseJson(body || '{}');
      if (!parsed.ok || !isPlainObject(parsed.value)) return badRequest('body must be {"access": true, "refresh": true}');
      if (parsed.value.access === true) sim.expireAccessTokens();
      if (parsed.value.refresh === true) sim.expireRefreshTokens();
      return json(200, { expired: { access: parsed.value.access === true, refresh: parsed.value.refresh === true } });
    }
    case 'POST /_sim/tokens/answer': {
      const parsed = parseJson(body || '{}');
      if (!parsed.ok || !isPlainObject(parsed.value)) return badRequest('body must be a token answer fault object ({} clears)');
      try {
        sim.setTokenAnswerFault(parsed.value as TokenAnswerFault);
      } catch (e) {
        return badRequest((e as Error).message);
      }
      return json(200, { answer: sim.tokenAnswerFault ?? null });
    }
    case 'POST /_sim/users': {
      const parsed = parseJson(body);
      if (
        !parsed.ok ||
        !isPlainObject(parsed.value) ||
        typeof parsed.value.username !== 'string' ||
        typeof parsed.value.password !== 'string'
      ) {
        return badRequest('body must be {"username": "...", "password": "...", "carriers"?: [...]}');
      }
      const carriers = parsed.value.carriers;
      sim.setUser({
        username: parsed.value.username,
        password: parsed.value.password,
        ...(Array.isArray(carriers) ? { carriers: carriers.map(String) } : {}),
      });
      return json(200, { username: parsed.value.username });
    }
    default:
      return json(404, { status: 404, error: 'Not Found', message: `unknown simulator admin route ${key}` });
  }
}

/**
 * The location updates alone by default: many figures (and scripts) count them. `type=all` adds the
 * movement and engine events, all in order of first arrival, each with its eventType in `event`.
 */
function receivedEvents(sim: AdminTarget, type: string | undefined): Reply {
  if (type === undefined || type === 'location') return json(200, [...sim.events.values()]);
  if (type === 'vehicle') return json(200, [...sim.vehicleEvents.values()]);
  if (type !== 'all') return badRequest(`unknown type "${type}"; types: location (the default), vehicle, all`);
  // Stable sort: arrivals in the same millisecond keep each map's own order.
  return json(
    200,
    [...sim.events.values(), ...sim.vehicleEvents.values()].sort((a, b) => a.receivedAt - b.receivedAt),
  );
}

function setFaults(sim: AdminTarget, body: string): Reply {
  const parsed = parseJson(body);
  if (!parsed.ok || !isPlainObject(parsed.value)) return badRequest('body must be an object of route -> fault spec (or null to clear)');
  const entries = Object.entries(parsed.value);
  for (const [route] of entries) if (!isRouteName(route)) return badRequest(`unknown route "${route}"; routes: ${ROUTES.join(', ')}`);
  try {
    for (const [route, spec] of entries) {
      if (!isRouteName(route)) continue;
      if (spec !== null && !isPlainObject(spec)) return badRequest(`fault of ${route} must be an object or null`);
      sim.faults.set(route, spec === null ? undefined : (spec as FaultSpec));
    }
  } catch (e) {
    return badRequest((e as Error).message);
  }
  return json(200, Object.fromEntries(ROUTES.map((r) => [r, sim.faults.get(r) ?? null])));
}

function setCapacity(sim: AdminTarget, body: string): Reply {
  const parsed = parseJson(body);
  if (!parsed.ok || !isPlainObject(parsed.value)) return badRequest('body must be an object of route -> capacity (or null to clear)');
  try {
    for (const [route, spec] of Object.entries(parsed.value)) {
      if (!isRouteName(route)) return badRequest(`unknown route "${route}"; routes: ${ROUTES.join(', ')}`);
      if (spec !== null && !isPlainObject(spec)) return badRequest(`capacity of ${route} must be an object or null`);
      sim.setCapacity(route, spec === null ? undefined : (spec as unknown as CapacitySpec));
    }
  } catch (e) {
    return badRequest((e as Error).message);
  }
  return json(200, sim.stats.capacity ?? {});
}

function badRequest(message: string): Reply {
  return json(400, { status: 400, error: 'Bad Request', message });
}
