import type { ErrorClass } from '../errors.js';

/**
 * What an HTTP status means, for each platform endpoint the agent calls: the one table behind the
 * uploader (events), registration (device), the token manager (token) and `location put`
 * (locations). Read a row across to see where the endpoints differ, and why:
 *
 * - `done`: the request did what it was for.
 * - `rejected`: the platform refused this one item (an event, a location); repeating it changes
 *   nothing, the rest of the queue is unaffected. For events the uploader applies one more rule
 *   before it gives an event up (upload/rejection-rule.ts): a refusal of everything is systemic.
 * - `auth`: 401 after the requester already refreshed the token and retried once (contracts.ts).
 * - `credentials`: the token service refused the username/password or the refresh token
 *   (docs/platform-contract.md, Tokens): never loop on it.
 * - `config`: a human must fix the configuration (an address, a path, a proxy, permissions);
 *   retry only slowly and say what to check.
 * - `transient`: try again later with backoff, never sooner than Retry-After.
 *
 * Choices the table makes (docs/decisions/http-status-meaning.md):
 * - 403, 404, 405, 407, 410, 415, 426 and 451 are configuration faults on every endpoint: a wrong
 *   path (404/405/410), a proxy wanting credentials (407), a TLS-upgrading or blocking middlebox
 *   (426/451), a body type the endpoint does not take (415) are the same for every request, so no
 *   single item is at fault and nothing is dropped for them.
 * - 408, 425 (Too Early), 429 and 5xx are transient everywhere.
 * - 409 on events means the platform already holds this event id (the id is the idempotency key):
 *   delivered. A location PUT is an upsert, so a 409 there is about that location: rejected.
 * - The device body is made from the `device` section of the configuration, so any other refusal
 *   of it (400, 409, 413, 422, ...) is a configuration fault (docs/platform-contract.md: 400 and 403).
 * - The token service documents 200 and 401 only (docs/platform-contract.md, Tokens): other answers
 *   outside the configuration faults are transient. (A Keycloak 400 invalid_grant is credentials;
 *   that needs the body, so token-client.ts checks it.)
 * - 1xx and 3xx are no answers any of these endpoints gives (the client follows no redirects):
 *   treated as a transient oddity, as the uploader always did.
 */

export type Endpoint = 'events' | 'device' | 'token' | 'locations';
export type StatusMeaning = 'done' | 'rejected' | 'auth' | 'credentials' | 'config' | 'transient';

export const ENDPOINTS: readonly Endpoint[] = ['events', 'device', 'token', 'locations'];

/** [status, then the meaning for events, device, token, locations (the order of ENDPOINTS)]. */
type Row = readonly [number | '1xx' | '2xx' | '3xx' | '4xx' | '5xx', StatusMeaning, StatusMeaning, StatusMeaning, StatusMeaning];

/** Exact statuses first; a class row ('4xx') answers for every status of the class not listed. */
// prettier-ignore
export const STATUS_TABLE: readonly Row[] = [
  // status    events        device        token          locations
  ['2xx',      'done',       'done',       'done',        'done'],
  [400,        'rejected',   'config',     'transient',   'rejected'],
  [401,        'auth',       'auth',       'credentials', 'auth'],
  [403,        'config',     'config',     'config',      'config'],
  [404,        'config',     'config',     'config',      'config'],
  [405,        'config',     'config',     'config',      'config'],
  [407,        'config',     'config',     'config',      'config'],
  [408,        'transient',  'transient',  'transient',   'transient'],
  [409,        'done',       'config',     'transient',   'rejected'],
  [410,        'config',     'config',     'config',      'config'],
  [413,        'rejected',   'config',     'transient',   'rejected'],
  [415,        'config',     'config',     'config',      'config'],
  [422,        'rejected',   'config',     'transient',   'rejected'],
  [425,        'transient',  'transient',  'transient',   'transient'],
  [426,        'config',     'config',     'config',      'config'],
  [429,        'transient',  'transient',  'transient',   'transient'],
  [451,        'config',     'config',     'config',      'config'],
  ['4xx',      'rejected',   'config',     'transient',   'rejected'],
  ['5xx',      'transient',  'transient',  'transient',   'transient'],
  ['1xx',      'transient',  'transient',  'transient',   'transient'],
  ['3xx',      'transient',  'transient',  'transient',   'transient'],
];

const BY_STATUS = new Map<number | string, Row>(STATUS_TABLE.map((row) => [row[0], row]));

/** What `status` from `endpoint` means. */
export function statusMeaning(endpoint: Endpoint, status: number): StatusMeaning {
  const row = BY_STATUS.get(status) ?? BY_STATUS.get(`${Math.floor(status / 100)}xx`);
  // Outside 100..599 is not HTTP: nothing to learn from it but "try again later".
  if (!row) return 'transient';
  return row[1 + ENDPOINTS.indexOf(endpoint)] as StatusMeaning;
}

/** The error class (errors.ts) of a non-2xx answer: what status output and supervisors act on. */
export function statusErrorClass(endpoint: Endpoint, status: number): ErrorClass {
  const meaning = statusMeaning(endpoint, status);
  switch (meaning) {
    case 'credentials':
      return 'config';
    case 'done':
      // Not an error at all; a caller that made one of it gets the harmless reading.
      return 'transient';
    default:
      return meaning;
  }
}

/** What to check for a configuration fault, per endpoint: the config key a person would fix. */
export function configHint(endpoint: Endpoint, status: number): string {
  if (status === 407) return 'a proxy between the gateway and the platform wants credentials: check the proxy';
  if (status === 426 || status === 451)
    return 'something between the gateway and the platform refuses the request: check the network path and proxy';
  if (status === 403) {
    if (endpoint === 'device') return 'the account may not register this device: check device.carrierCode and the credentials';
    return 'the account is authenticated but not permitted: ask the platform contact to grant it';
  }
  const path = {
    events: 'check platform.planningUrl and platform.eventsPath',
    device: 'check platform.deviceUrl',
    token: 'check platform.authUrl',
    locations: 'check platform.planningUrl and platform.locationsPath',
  }[endpoint];
  if (status === 415) return `the endpoint does not take this body type: ${path}`;
  if (status === 404 || status === 405 || status === 410) return path;
  // The device body is the device section: any other refusal of it is about that section.
  return endpoint === 'device' ? 'check the device section of the configuration' : path;
}
