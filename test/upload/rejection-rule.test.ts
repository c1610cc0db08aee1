import { describe, expect, it } from 'vitest';
import { judgeRefusal, namesEventField, type RefusalFacts, type RefusalVerdict } from '../../src/upload/rejection-rule.js';

// [what, namesField, systemic, acceptedSince, verdict]
const table: [string, boolean, boolean, boolean, RefusalVerdict][] = [
  ['names a field, another event accepted since, no systemic run: its own fault', true, false, true, 'dead-letter'],
  ['names a field, nothing accepted since: undecided, stays queued', true, false, false, 'wait'],
  ['names nothing (HTML, a bare status), accepted since: held, never dropped', false, false, true, 'hold'],
  ['names nothing, nothing accepted since', false, false, false, 'wait'],
  ['names a field, but in a systemic run that an acceptance ended: sent again', true, true, true, 'resend'],
  ['names nothing, systemic run ended: sent again', false, true, true, 'resend'],
  ['names a field, systemic run still going: undecided, stays queued', true, true, false, 'wait'],
  ['names nothing, systemic run still going', false, true, false, 'wait'],
];

describe('the rejection rule', () => {
  it.each(table)('%s', (_what, namesField, systemic, acceptedSince, verdict) => {
    const facts: RefusalFacts = { namesField, systemic, acceptedSince };
    expect(judgeRefusal(facts)).toBe(verdict);
  });

  it.each([
    ['OTM5 error objects with a field', [{ type: 'invalidField', message: 'bad', field: 'creationDate' }], true],
    [
      'one of several names a field',
      [
        { type: 'invalidJson', message: 'x' },
        { type: 'missingField', message: 'y', field: 'geoReference' },
      ],
      true,
    ],
    ['error objects without a field', [{ type: 'invalidJson', message: 'unexpected token' }], false],
    ['an empty field', [{ type: 'invalidField', message: 'm', field: '' }], false],
    ['an {errors: [...]} wrapper', { errors: [{ field: 'lat', message: 'out of range' }] }, true],
    ['a Spring error', { status: 400, error: 'Bad Request', message: 'no' }, false],
    ['a string', 'Bad Request', false],
    ['no body', undefined, false],
    ['an empty array', [], false],
  ])('names a field: %s', (_what, body, expected) => {
    expect(namesEventField(body)).toBe(expected);
  });
});
