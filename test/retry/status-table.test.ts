import { describe, expect, it } from 'vitest';
import { configHint, ENDPOINTS, statusErrorClass, statusMeaning, type StatusMeaning } from '../../src/retry/status-table.js';

/**
 * The expected meaning of each status for each endpoint, written out independently of the table in
 * src/retry/status-table.ts: a change there must be a change here, on purpose.
 */
// prettier-ignore
const expected: [number, StatusMeaning, StatusMeaning, StatusMeaning, StatusMeaning][] = [
  // status events       device       token          locations
  [200,     'done',      'done',      'done',        'done'],
  [201,     'done',      'done',      'done',        'done'],
  [204,     'done',      'done',      'done',        'done'],
  [100,     'transient', 'transient', 'transient',   'transient'],
  [302,     'transient', 'transient', 'transient',   'transient'],
  [400,     'rejected',  'config',    'transient',   'rejected'],
  [401,     'auth',      'auth',      'credentials', 'auth'],
  [402,     'rejected',  'config',    'transient',   'rejected'],
  [403,     'config',    'config',    'config',      'config'],
  [404,     'config',    'config',    'config',      'config'],
  [405,     'config',    'config',    'config',      'config'],
  [407,     'config',    'config',    'config',      'config'],
  [408,     'transient', 'transient', 'transient',   'transient'],
  [409,     'done',      'config',    'transient',   'rejected'],
  [410,     'config',    'config',    'config',      'config'],
  [411,     'rejected',  'config',    'transient',   'rejected'],
  [413,     'rejected',  'config',    'transient',   'rejected'],
  [415,     'config',    'config',    'config',      'config'],
  [422,     'rejected',  'config',    'transient',   'rejected'],
  [425,     'transient', 'transient', 'transient',   'transient'],
  [426,     'config',    'config',    'config',      'config'],
  [429,     'transient', 'transient', 'transient',   'transient'],
  [451,     'config',    'config',    'config',      'config'],
  [500,     'transient', 'transient', 'transient',   'transient'],
  [502,     'transient', 'transient', 'transient',   'transient'],
  [503,     'transient', 'transient', 'transient',   'transient'],
  [504,     'transient', 'transient', 'transient',   'transient'],
  [599,     'transient', 'transient', 'transient',   'transient'],
  [0,       'transient', 'transient', 'transient',   'transient'],
  [600,     'transient', 'transient', 'transient',   'transient'],
];

describe('the status table', () => {
  it.each(expected)('HTTP %i: events %s, device %s, token %s, locations %s', (status, ...meanings) => {
    expect(ENDPOINTS.map((endpoint) => statusMeaning(endpoint, status))).toEqual(meanings);
  });

  it('405, 407, 410, 415, 426 and 451 are configuration faults on every endpoint, like 403 and 404', () => {
    for (const status of [403, 404, 405, 407, 410, 415, 426, 451])
      for (const endpoint of ENDPOINTS) expect(statusErrorClass(endpoint, status), `${endpoint} ${status}`).toBe('config');
  });

  it.each([
    ['events', 400, 'rejected'],
    ['events', 401, 'auth'],
    ['token', 401, 'config'],
    ['events', 503, 'transient'],
    ['events', 409, 'transient'],
    ['device', 400, 'config'],
  ] as const)('error class: %s %i -> %s', (endpoint, status, cls) => {
    expect(statusErrorClass(endpoint, status)).toBe(cls);
  });

  it.each([
    ['events', 405, /platform\.eventsPath/],
    ['events', 407, /proxy/],
    ['device', 404, /platform\.deviceUrl/],
    ['device', 400, /device section/],
    ['device', 403, /device\.carrierCode/],
    ['token', 410, /platform\.authUrl/],
    ['locations', 415, /body type.*platform\.locationsPath/],
    ['locations', 451, /network path/],
  ] as const)('the hint for %s %i names what to check', (endpoint, status, hint) => {
    expect(configHint(endpoint, status)).toMatch(hint);
  });
});
